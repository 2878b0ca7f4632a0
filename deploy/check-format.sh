#!/usr/bin/env bash
# Fails when a C++ source of the tree differs from what the checked-in .clang-format makes of
# it, and lists those files. Fix with: git ls-files '*.cc' '*.h' | xargs clang-format -i
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
unformatted=()
while IFS= read -r file; do
  if ! clang-format --style=file "$file" | cmp -s - "$file"; then unformatted+=("$file"); fi
done < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -path ./build -prune -o \( -name '*.cc' -o -name '*.h' \) -print)
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check-format: ${#unformatted[@]} file(s) differ from .clang-format:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "HINT: Run: git ls-files '*.cc' '*.h' | xargs clang-format -i" >&2
  exit 1
fi
echo "check-format: every C++ file matches .clang-format"
