#!/usr/bin/env python3
# Checks the documentation's links: every relative link and image in README.md, docs/*.md and
# the *.md files under deploy/ and tests/ must point to a file or directory that exists, and
# every #anchor to a heading of the target Markdown file, named as GitHub names it (lowercase,
# punctuation other than hyphens, underscores and spaces dropped, spaces made hyphens, a repeated
# heading suffixed -1, -2, ...). Lines inside ``` or ~~~ fences and `code spans` are neither
# headings nor links (a shell comment such as "# cost-delay-2ms" in a code block is no heading).
# Links with a scheme (https:, mailto:) are not followed. It also fails when README.md is longer
# than 200 lines: the README is the front door, the manual is docs/.
#
#   deploy/check-docs.py [ROOT]      (ROOT defaults to the repository this script is in)
#
# Prints "check-docs: N links in M files checked" and exits 0, or one line per problem,
# "FILE:LINE: broken link "TARGET"" (FILE relative to ROOT), and exits 1. Python 3 standard
# library only; ctest runs it as the test docs_links (label deploy).
import os
import re
import sys
import urllib.parse

README_MAX_LINES = 200
SKIP_DIRS = {".git", "node_modules", "build"}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
)
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>\n]*>|\S+)", re.M)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def blank_code(text):
    """The text with fenced code blocks and code spans replaced by spaces (offsets kept)."""
    lines = text.split("\n")
    fence = None
    for i, line in enumerate(lines):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            lines[i] = " " * len(line)
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not line.strip().lstrip(fence[0]):
                fence = None
            lines[i] = " " * len(line)
    text = "\n".join(lines)
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    """The anchors of a Markdown file's headings, in GitHub's naming."""
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, seen = set(), {}
    fence = None
    previous = ""
    for line in lines:
        match = FENCE.match(line)
        if fence is None and match:
            fence, previous = match.group(1), ""
            continue
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not line.strip().lstrip(fence[0]):
                fence = None
            continue
        heading = None
        atx = ATX_HEADING.match(line)
        if atx:
            heading = atx.group(2) or ""
        elif SETEXT_UNDERLINE.match(line) and previous.strip() and not previous.lstrip().startswith(
                ("|", "-", "*", "+", ">")) and not ATX_HEADING.match(previous):
            heading = previous.strip()
        if heading is not None:
            base = slug(heading)
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
            previous = ""
        else:
            previous = line
    cache[path] = found
    return found


def markdown_files(root):
    files = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    for top in ("deploy", "tests"):
        for directory, subdirs, names in os.walk(os.path.join(root, top)):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS and not d.startswith("."))
            files += [os.path.join(directory, n) for n in sorted(names) if n.endswith(".md")]
    return [f for f in files if os.path.isfile(f)]


def check_file(path, root, problems):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    visible = blank_code(text)
    targets = [(m.start(1), m.group(1)) for m in INLINE_LINK.finditer(visible)]
    targets += [(m.start(1), m.group(1)) for m in REFERENCE_DEFINITION.finditer(visible)]
    checked = 0
    for offset, target in sorted(targets):
        target = target.strip("<>")
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue
        checked += 1
        file_part, _, anchor = target.partition("#")
        file_part = urllib.parse.unquote(file_part.split("?", 1)[0])
        if file_part:
            base = root if file_part.startswith("/") else os.path.dirname(path)
            destination = os.path.normpath(os.path.join(base, file_part.lstrip("/")))
        else:
            destination = path
        ok = os.path.exists(destination)
        if ok and anchor and destination.endswith(".md") and os.path.isfile(destination):
            ok = urllib.parse.unquote(anchor).lower() in anchors(destination)
        if not ok:
            line = text.count("\n", 0, offset) + 1
            problems.append(f'{os.path.relpath(path, root)}:{line}: broken link "{target}"')
    return checked


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    problems = []
    readme = os.path.join(root, "README.md")
    if not os.path.isfile(readme):
        print(f"check-docs: error: no README.md in {root}", file=sys.stderr)
        return 1
    with open(readme, encoding="utf-8") as f:
        readme_lines = len(f.read().splitlines())
    if readme_lines > README_MAX_LINES:
        problems.append(f"README.md:{readme_lines}: {readme_lines} lines, more than "
                        f"{README_MAX_LINES} (move the details to a page under docs/)")
    files = markdown_files(root)
    links = sum(check_file(path, root, problems) for path in files)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-docs: {len(problems)} problems in {len(files)} files", file=sys.stderr)
        return 1
    print(f"check-docs: {links} links in {len(files)} files checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
