// pgwaitprof pages: the interactive charts, drawn with uPlot (exporters/render/vendor/uplot) from the
// JSON that the C++ renderers put next to each chart in <script type="application/json">: the
// run report's timeline (exporters/render/report_html_charts.cc) and the matrix page's wait-class
// composition per variant (exporters/render/matrix_html.cc). Every series comes from that JSON with
// its name, unit, axis and colour, so a new series is a change on the C++ side only.
//
// Each chart writes into its element's data-ink the share of its plot area painted in colour by
// the series, measured once before any overlay is drawn, so that the browser test
// (tests/exporters/render/browser_check.sh) can tell a chart that drew its data from an empty frame.
var pgwaitprof = (function () {
  'use strict';

  var DIGITS = {AAS: 2, tps: 1, ms: 3};
  var FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

  function readJson(id) {
    return JSON.parse(document.getElementById(id).textContent);
  }

  function number(value, digits) {
    return value == null || !isFinite(value) ? '-' : value.toFixed(digits);
  }

  function seconds(value) {
    return String(Math.round(value * 1000) / 1000);
  }

  function withAlpha(colour, alpha) {
    var rgb = parseInt(colour.slice(1), 16);
    return 'rgba(' + (rgb >> 16) + ',' + ((rgb >> 8) & 255) + ',' + (rgb & 255) + ',' + alpha + ')';
  }

  function fromZero(top) {
    return function (u, min, max) {
      var high = top != null ? top : max;
      return [0, high > 0 ? high * 1.08 : 1];
    };
  }

  function compactNumber(value) {
    if (Math.abs(value) >= 1000) return (value / 1000).toFixed(value % 1000 === 0 ? 0 : 1) + 'k';
    return String(Math.round(value * 1000) / 1000);
  }

  // Cumulative sums of the shown stacked series, bottom (first) up, and the bands that fill
  // each of them down to the shown stacked series below it. A missing value (null) stays a
  // gap and adds nothing to the series above; hidden series are left out of the sums.
  function stack(raw, stacked, shown) {
    var data = [raw[0]];
    var bands = [];
    var sums = raw[0].map(function () { return 0; });
    var below = -1;
    for (var index = 1; index < raw.length; index++) {
      if (!stacked[index]) {
        data.push(raw[index]);
        continue;
      }
      if (!shown[index]) {
        data.push(raw[index].map(function () { return null; }));
        continue;
      }
      data.push(raw[index].map(function (value, point) {
        if (value == null) return null;
        sums[point] += value;
        return sums[point];
      }));
      if (below > 0) bands.push({series: [index, below]});
      below = index;
    }
    return {data: data, bands: bands};
  }

  function restack(u, raw, stacked) {
    var shown = u.series.map(function (series) { return series.show; });
    var result = stack(raw, stacked, shown);
    u.delBand(null);
    result.bands.forEach(function (band) { u.addBand(band); });
    u.setData(result.data, false);
    u.setScale('x', {min: u.scales.x.min, max: u.scales.x.max});
  }

  // Share of the plot area in colour (not white, grey or black: grid lines and axes are grey).
  function measureInk(u, element) {
    if (element.hasAttribute('data-ink')) return;
    var box = u.bbox;
    if (box.width < 1 || box.height < 1) return;
    var pixels = u.ctx.getImageData(box.left, box.top, box.width, box.height).data;
    var coloured = 0;
    for (var at = 0; at < pixels.length; at += 4) {
      var high = Math.max(pixels[at], pixels[at + 1], pixels[at + 2]);
      var low = Math.min(pixels[at], pixels[at + 1], pixels[at + 2]);
      if (pixels[at + 3] > 40 && high - low > 40) coloured++;
    }
    element.setAttribute('data-ink', (coloured / (box.width * box.height)).toFixed(4));
  }

  // uPlot caches the context's styles: every hook drawing saves and restores it.
  // Shaded spans of the run with a label: stalls, and the sampler's outages.
  function drawSpans(u, spans, label, fill, ink) {
    var ctx = u.ctx;
    var box = u.bbox;
    var ratio = uPlot.pxRatio;
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.left, box.top, box.width, box.height);
    ctx.clip();
    ctx.font = '600 ' + Math.round(12 * ratio) + 'px ' + FONT;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    spans.forEach(function (span) {
      var left = u.valToPos(span[0], 'x', true);
      var width = Math.max(2 * ratio, u.valToPos(span[1], 'x', true) - left);
      ctx.fillStyle = fill;
      ctx.fillRect(left, box.top, width, box.height);
      ctx.fillStyle = ink;
      ctx.fillText(label, left + width / 2, box.top + 3 * ratio);
    });
    ctx.restore();
  }

  // Background activity (autovacuum, checkpoint, manual VACUUM) as marks above the plot.
  function drawLanes(u, lanes) {
    var ctx = u.ctx;
    var box = u.bbox;
    var ratio = uPlot.pxRatio;
    ctx.save();
    ctx.font = '600 ' + Math.round(12 * ratio) + 'px ' + FONT;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    lanes.forEach(function (lane, index) {
      var top = (6 + index * 15) * ratio;
      var height = 10 * ratio;
      ctx.fillStyle = '#f1f3f6';
      ctx.fillRect(box.left, top, box.width, height);
      ctx.fillStyle = lane.colour;
      lane.spans.forEach(function (span) {
        var left = Math.max(box.left, u.valToPos(span[0], 'x', true));
        var right = Math.min(box.left + box.width, u.valToPos(span[1], 'x', true));
        if (right > left) ctx.fillRect(left, top, Math.max(ratio, right - left), height);
      });
      ctx.fillStyle = '#1d2330';
      ctx.fillText(lane.name, box.left - 6 * ratio, top + height / 2);
    });
    ctx.restore();
  }

  function seriesOptions(spec, values) {
    var digits = DIGITS[spec.unit] != null ? DIGITS[spec.unit] : 2;
    var series = {
      label: spec.name,
      scale: spec.scale,
      stroke: spec.colour,
      width: spec.stacked ? 1 : 2,
      value: function (u, shown, index, point) {
        var text = number(point == null ? null : values[point], digits);
        return spec.unit === 'AAS' || text === '-' ? text : text + ' ' + spec.unit;
      },
    };
    if (spec.stacked) {
      series.fill = withAlpha(spec.colour, 0.85);
      series.points = {show: false};
    }
    if (spec.band) series.fill = withAlpha(spec.colour, 0.3);
    if (spec.dash) series.dash = [6, 4];
    return series;
  }

  function timeAxis() {
    return {
      label: 'time since start (s)',
      values: function (u, splits) { return splits.map(function (v) { return seconds(v) + ' s'; }); },
    };
  }

  function valueAxis(axis) {
    var right = axis.side === 'right';
    return {
      scale: axis.scale,
      label: axis.label,
      side: right ? 1 : 3,
      grid: {show: !right},
      values: function (u, splits) { return splits.map(compactNumber); },
    };
  }

  // The run report's timeline: AAS per wait class stacked, tps and latency on their own axes,
  // stalls shaded, background activity above. Drag to zoom, double-click to reset, click a
  // legend entry to hide its series.
  function timeline(chartId, dataId, infoId) {
    var element = document.getElementById(chartId);
    var info = document.getElementById(infoId);
    var chart = readJson(dataId);
    var count = chart.x.length;
    // The run's two edges as extra points, so that the areas span the axis as the intervals
    // do; lines have no value there.
    var raw = [[chart.start_s].concat(chart.x, [chart.end_s])];
    var stacked = [false];
    var interval = function (point) { return Math.min(Math.max(point - 1, 0), count - 1); };
    var series = [{
      label: 'interval',
      value: function (u, shown, index, point) {
        if (point == null) return '-';
        var at = interval(point);
        return seconds(chart.starts[at]) + '–' + seconds(chart.ends[at]) + ' s';
      },
    }];
    chart.series.forEach(function (spec) {
      var first = spec.stacked ? spec.values[0] : null;
      var last = spec.stacked ? spec.values[count - 1] : null;
      var values = [first].concat(spec.values, [last]);
      raw.push(values);
      stacked.push(!!spec.stacked);
      series.push(seriesOptions(spec, values));
    });
    var scales = {x: {time: false}};
    var axes = [timeAxis()];
    chart.axes.forEach(function (axis) {
      scales[axis.scale] = {range: fromZero(null)};
      axes.push(valueAxis(axis));
    });
    var initial = stack(raw, stacked, raw.map(function () { return true; }));
    var height = 400;
    var u = new uPlot({
      width: element.clientWidth || 1000,
      height: height,
      padding: [14 + chart.lanes.length * 15, 8, 0, 0],
      cursor: {drag: {x: true, y: false}},
      scales: scales,
      series: series,
      axes: axes,
      bands: initial.bands,
      hooks: {
        draw: [function (u) {
          measureInk(u, element);
          drawSpans(u, chart.stalls, 'stall', 'rgba(224,36,36,0.14)', '#b42318');
          drawSpans(u, chart.outages || [], 'sampler lost', 'rgba(90,90,90,0.2)', '#333');
          drawLanes(u, chart.lanes);
        }],
        setSeries: [function (u) { restack(u, raw, stacked); }],
        setCursor: [function (u) {
          var point = u.cursor.idx;
          info.textContent = point == null ? '' : chart.notes[interval(point)];
        }],
      },
    }, initial.data, element);
    window.addEventListener('resize', function () {
      u.setSize({width: element.clientWidth, height: height});
    });
    selfTest([u]);
    return u;
  }

  // The matrix page: one variant's wait classes stacked against the client counts, as average
  // active sessions or as shares of the non-idle samples (`view`), on the y range every variant
  // shares so that charts side by side compare; the cursor moves in every variant's chart at
  // once.
  function composition(element, chart, variant, view) {
    var shares = view === 'share';
    var positions = chart.clients.map(function (clients, index) { return index; });
    var raw = [positions];
    var stacked = [false];
    var series = [{
      label: 'clients',
      value: function (u, shown) { return shown == null ? '-' : String(chart.clients[shown]); },
    }];
    variant.series.forEach(function (spec) {
      var values = shares ?
          spec.share.map(function (value) { return value == null ? null : 100 * value; }) :
          spec.aas;
      raw.push(values);
      stacked.push(true);
      series.push({
        label: spec.name,
        scale: 'y',
        stroke: spec.colour,
        fill: withAlpha(spec.colour, 0.85),
        width: 1,
        points: {show: true, size: 5, fill: spec.colour},
        value: function (u, shown, index, point) {
          if (point == null || values[point] == null) return '-';
          var aas = number(spec.aas[point], 2) + ' ±' + number(spec.aas_error[point], 2);
          var share = number(100 * spec.share[point], 1) + '% ±' +
              number(100 * spec.share_error[point], 1);
          return shares ? share + ' (' + aas + ' AAS)' : aas + ' (' + share + ')';
        },
      });
    });
    var initial = stack(raw, stacked, raw.map(function () { return true; }));
    var height = 300;
    var u = new uPlot({
      width: element.clientWidth || 560,
      height: height,
      cursor: {drag: {x: false, y: false}, sync: {key: 'pgwaitprof-matrix'}},
      scales: {
        x: {time: false, range: function () { return [-0.25, positions.length - 0.75]; }},
        y: {range: shares ? function () { return [0, 100]; } : fromZero(chart.aas_max)},
      },
      series: series,
      axes: [
        {
          label: 'clients',
          splits: function () { return positions; },
          values: function (u, splits) {
            return splits.map(function (at) { return String(chart.clients[at]); });
          },
        },
        {
          scale: 'y',
          label: shares ? '% of non-idle samples' : 'average active sessions',
          values: function (u, splits) { return splits.map(compactNumber); },
        },
      ],
      bands: initial.bands,
      hooks: {
        draw: [function (u) { measureInk(u, element); }],
        setSeries: [function (u) { restack(u, raw, stacked); }],
      },
    }, initial.data, element);
    return u;
  }

  // Every variant's composition chart (elements `prefix` + index), and the buttons of
  // `toggleId` that switch them all between AAS and shares.
  function compositions(dataId, prefix, toggleId) {
    var chart = readJson(dataId);
    var plots = [];
    function drawAll(view) {
      plots.forEach(function (u) { u.destroy(); });
      plots = chart.variants.map(function (variant, index) {
        return composition(document.getElementById(prefix + index), chart, variant, view);
      });
      selfTest(plots);
    }
    var buttons = document.querySelectorAll('#' + toggleId + ' button');
    buttons.forEach(function (button) {
      button.addEventListener('click', function () {
        buttons.forEach(function (other) { other.classList.toggle('on', other === button); });
        drawAll(button.getAttribute('data-view'));
      });
    });
    drawAll('aas');
    window.addEventListener('resize', function () {
      plots.forEach(function (u) {
        u.setSize({width: u.root.parentNode.clientWidth, height: u.height});
      });
    });
    return plots;
  }

  // With #selftest in the address, the cursor goes to the middle of each chart once drawn, so
  // that the legends show values (the browser test reads them from the DOM).
  function selfTest(plots) {
    if (!/selftest/.test(window.location.hash)) return;
    setTimeout(function () {
      plots.forEach(function (u) {
        u.setCursor({left: u.bbox.width / uPlot.pxRatio / 2, top: u.bbox.height / uPlot.pxRatio / 2});
      });
    }, 0);
  }

  // A flame graph (d3-flame-graph) of the tree in the JSON element dataId: frames {name, value,
  // colour, link: id of the element a click on the frame leads to, children}. The C++ side
  // colours the frames (one scheme for the wait and the CPU graphs); the number of frames drawn
  // goes into data-frames for the browser test.
  function flame(elementId, dataId) {
    var element = document.getElementById(elementId);
    var tree = JSON.parse(document.getElementById(dataId).textContent);
    var chart = flamegraph.default()
        .width(Math.max(element.clientWidth, 600))
        .cellHeight(18)
        .transitionDuration(0)
        .minFrameSize(1)
        .sort(true)
        .setColorMapper(function (node) { return node.data.colour || '#9aa1ad'; })
        .onClick(function (node) {
          var target = node && node.data.link && document.getElementById(node.data.link);
          if (target) target.scrollIntoView();
        });
    d3.select(element).datum(tree).call(chart);
    element.setAttribute('data-frames', String(element.querySelectorAll('g.frame').length));
    return chart;
  }

  // Draws one chart; a chart that fails is reported (console.error, which record_errors.js
  // records) and leaves the others and the static fallbacks in place.
  function draw(kind) {
    var args = Array.prototype.slice.call(arguments, 1);
    try {
      return {timeline: timeline, compositions: compositions, flame: flame}[kind].apply(null, args);
    } catch (error) {
      console.error('pgwaitprof: could not draw the ' + kind + ' chart: ' +
          (error && error.stack ? error.stack : error));
      return null;
    }
  }

  return {draw: draw, stack: stack};
})();
