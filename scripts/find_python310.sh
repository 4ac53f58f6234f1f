#!/usr/bin/env bash
# Prints the path of a working Python 3.10 (rasa 3.6.21 refuses 3.11+): python3.10 on PATH, else pyenv's 3.10.
for candidate in python3.10 "$(pyenv root 2>/dev/null)"/versions/3.10.*/bin/python /usr/local/bin/python3.10 /usr/bin/python3.10; do
  path=$(command -v "$candidate" 2>/dev/null) || continue
  if "$path" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))' 2>/dev/null; then
    echo "$path"
    exit 0
  fi
done
exit 1
