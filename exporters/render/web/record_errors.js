// pgwaitprof pages: the first script of every page. Records each error of the page (script
// errors and exceptions, failed loads, console.error) on <html data-errors>, one a line, which
// tests/exporters/render/browser_check.sh reads. Marks <html class="js"> so that static chart
// fallbacks stay hidden while the charts draw, and shows them again on the first error.
(function () {
  'use strict';
  var root = document.documentElement;
  var seen = [];
  function note(text) {
    seen.push(String(text));
    root.setAttribute('data-errors', seen.join('\n'));
    root.classList.remove('js');
  }
  root.setAttribute('data-errors', '');
  root.classList.add('js');
  window.addEventListener('error', function (event) {
    var target = event.target;
    if (target && target !== window && (target.src || target.href)) {
      note('could not load ' + (target.src || target.href));
    } else {
      note((event.message || 'error') + (event.lineno ? ' (line ' + event.lineno + ')' : ''));
    }
  }, true);
  window.addEventListener('unhandledrejection', function (event) {
    note('unhandled rejection: ' + event.reason);
  });
  var consoleError = console.error;
  console.error = function () {
    note(Array.prototype.join.call(arguments, ' '));
    return consoleError.apply(console, arguments);
  };
})();
