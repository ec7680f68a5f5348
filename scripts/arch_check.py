#!/usr/bin/env python3
"""The redesign's structural limits (issue #35), checked on the source tree:
- no two files of src/ call each other (x.c with its header x.h is one module; A uses B when
  A calls a function that B.c defines);
- no file in src/ over 1,000 lines;
- no function in src/, mpi/ or tools/ over 100 lines (ctags' line and end fields).
Prints each violation and exits 1 if there is any. Usage: arch_check.py [ROOT] [--graph]"""
import os, re, subprocess, sys

root = next((a for a in sys.argv[1:] if not a.startswith('--')), '.')
src = os.path.join(root, 'src')
MAX_FILE, MAX_FUNC = 1000, 100
bad = []

def module(path):
    return os.path.splitext(os.path.basename(path))[0]

files = sorted(f for f in os.listdir(src) if f.endswith(('.c', '.h')))
text = {f: open(os.path.join(src, f), encoding='utf-8').read() for f in files}
strip = {f: re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"', ' ', t, flags=re.S) for f, t in text.items()}

# Functions with external linkage defined in each .c (ctags: no "file:" scope field).
defs = {}
out = subprocess.run(['ctags', '--kinds-C=f', '--fields=+neS', '-o', '-'] + [os.path.join(src, f) for f in files if f.endswith('.c')],
                     capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    cols = line.split('\t')
    if any(c == 'file:' for c in cols):
        continue
    defs.setdefault(cols[0], module(cols[1]))

# A file uses module B when it calls a function that B's .c defines (a header shared by several
# files, such as grid.h, is not a use of all of them; an inline function in a header counts for
# the header's module).
uses = {}
for f, t in strip.items():
    a = module(f)
    for name in set(re.findall(r'\b([A-Za-z_]\w*)\s*\(', t)):
        b = defs.get(name)
        if b and b != a:
            uses.setdefault(a, set()).add(b)

for a in sorted(uses):
    for b in sorted(uses[a]):
        if a < b and a in uses.get(b, set()):
            bad.append(f'circle: src/{a} and src/{b} use each other')

for f in files:
    n = text[f].count('\n')
    if n > MAX_FILE:
        bad.append(f'file over {MAX_FILE} lines: src/{f} ({n})')

cfiles = [os.path.join(d, f) for d in ('src', 'mpi', 'tools') if os.path.isdir(os.path.join(root, d))
          for f in sorted(os.listdir(os.path.join(root, d))) if f.endswith('.c')]
out = subprocess.run(['ctags', '--kinds-C=f', '--fields=+ne', '-o', '-'] + [os.path.join(root, f) for f in cfiles],
                     capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    cols = line.split('\t')
    fields = dict(c.split(':', 1) for c in cols[3:] if ':' in c)
    if 'line' in fields and 'end' in fields:
        n = int(fields['end']) - int(fields['line']) + 1
        if n > MAX_FUNC:
            bad.append(f'function over {MAX_FUNC} lines: {os.path.relpath(cols[1], root)}: {cols[0]} ({n})')

if '--graph' in sys.argv:
    for a in sorted(uses):
        print(f'{a}: {" ".join(sorted(uses[a]))}')
for b in bad:
    print(b)
print(f'arch_check: {len(bad)} violation(s)')
sys.exit(1 if bad else 0)
