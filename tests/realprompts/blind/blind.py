#!/usr/bin/env python3
"""tests/realprompts/blind/blind.py: the blind-reader study of the real prompt
corpus (BLIND.md). How well can a careful reader label a file from its text
and upstream path alone, without the caller's code the corpus labels were
checked against? That is the ceiling any linter of the file's text can reach.

  blind.py sample DIR     write the reader folders (DIR/S1, DIR/S2: ID.txt,
                          INDEX.tsv) and DIR/GUIDE.md from SAMPLE.tsv
  blind.py score [--atlabel TSV] [--show] OUT-A.tsv ...
                          score readers' labels against LABELS.tsv the way
                          tests/test_lint_real.c scores promptlint, beside
                          today's promptlint (and, with --atlabel, the one
                          at labelling: atlabel.py --tsv) on the same files

Samples S1 and S2 are dev files; H1..H5 are all held files, read only by
the readers: this script prints their totals, never a held file's verdict.
Not part of
`make test`: the readers' outputs are committed, this only re-scores them.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(CORPUS))


def tsv(path):
    with open(path, encoding='utf-8') as f:
        return [l.rstrip('\n').split('\t') for l in f if l.strip()]


def load():
    sample = {r[0]: r[1] for r in tsv(os.path.join(HERE, 'SAMPLE.tsv'))}
    labels = {r[0]: r for r in tsv(os.path.join(CORPUS, 'LABELS.tsv'))}
    sources = {r[0]: r[2] for r in tsv(os.path.join(CORPUS, 'SOURCES.tsv'))}
    for fid, f in sample.items():
        want = 'held' if fid.startswith('H') else 'dev'
        if labels[f][1] != want:
            sys.exit(f'{fid}: {f} is not a {want} file')
    return sample, labels, sources


def cmd_sample(args):
    sample, _, sources = load()
    with open(os.path.join(CORPUS, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    a = readme.index('## How a file was labelled')
    b = readme.index('\n## ', a + 1)
    os.makedirs(args.dir, exist_ok=True)
    with open(os.path.join(args.dir, 'GUIDE.md'), 'w', encoding='utf-8') as g:
        g.write(readme[a:b + 1])
    for fid, f in sorted(sample.items()):
        d = os.path.join(args.dir, fid.split('-')[0])
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(os.path.join(CORPUS, f), os.path.join(d, fid + '.txt'))
        with open(os.path.join(d, 'INDEX.tsv'), 'a', encoding='utf-8') as idx:
            idx.write(f'{fid}\t{sources[f]}\n')
    print(f'{len(sample)} files under {args.dir}')


def verdict(label_line, lines):
    """(tp, fp, fn) of one file whose error lines are LINES, as
    tests/test_lint_real.c counts them."""
    L = label_line
    hit = any(L and L - 1 <= x <= L + 1 for x in lines)
    early = any(not L or x < L - 1 for x in lines)
    return (int(bool(L) and hit), int(early), int(bool(L) and not hit))


def promptlint_lines(path, as_path):
    with open(path, 'rb') as f:
        data = f.read()
    out = subprocess.run([os.path.join(ROOT, 'bin', 'promptlint'), '--isolated', '--no-model', '--format', 'json',
                          '--stdin-filename', as_path, '-'], input=data, capture_output=True).stdout
    return [i['line'] for i in json.loads(out)['findings'] if i.get('severity') == 'error']


def add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def pr(t):
    tp, fp, fn = t
    p = f'{tp / (tp + fp):.3f}' if tp + fp else '  -  '
    r = f'{tp / (tp + fn):.3f}' if tp + fn else '  -  '
    return f'{tp:3d}/{fp:3d}/{fn:3d}  P {p}  R {r}'


def read_reader(path):
    out = {}
    for r in tsv(path):
        line = int(r[2]) if r[1] == 'positive' else 0
        out[r[0]] = (line, r[3] if len(r) > 3 else 'high', r[4] if len(r) > 4 else '')
    return out


def cmd_score(args):
    sample, labels, sources = load()
    then = {}
    if args.atlabel:
        then = {r[1]: r[3] for r in tsv(args.atlabel)}
    readers = {os.path.basename(p): read_reader(p) for p in args.out}
    union = {}
    for name, rd in readers.items():
        missing = set(fid for fid in sample if fid.split('-')[0] == next(iter(rd)).split('-')[0]) - set(rd)
        if missing:
            print(f'{name}: {len(missing)} files of its sample not labelled')
        tot, now, th, rd_th = (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0)
        conf = {'high': (0, 0, 0), 'low': (0, 0, 0)}
        n_th = 0
        for fid, (line, c, why) in sorted(rd.items()):
            f = sample[fid]
            L = int(labels[f][3]) if labels[f][2] == 'positive' else 0
            v = verdict(L, [line] if line else [])
            tot = add(tot, v)
            conf[c if c in conf else 'high'] = add(conf[c if c in conf else 'high'], v)
            now = add(now, verdict(L, promptlint_lines(os.path.join(CORPUS, f), sources[f])))
            union.setdefault(fid, v)
            if f in then:
                t = then[f]
                th = add(th, (int('TP' in t), int('FP' in t), int('FN' in t)))
                rd_th = add(rd_th, v)
                n_th += 1
            if args.show and (v[1] or v[2]) and labels[f][1] == 'dev':  # never a held file's
                print(f'  {name} {fid} {f}: label {L}, reader {line} ({c}): {why}')
        print(f'{name}: {len(rd)} files  reader {pr(tot)}  (high {pr(conf["high"])}; low {pr(conf["low"])})')
        print(f'{"":>{len(name)}}  today\'s promptlint, same files {pr(now)}')
        if n_th:
            print(f'{"":>{len(name)}}  the {n_th} files of batches v2+: reader {pr(rd_th)}, '
                  f'promptlint at labelling {pr(th)}')
    if len(readers) > 1:
        tot = (0, 0, 0)
        for v in union.values():
            tot = add(tot, v)
        print(f'first reader of each file: {len(union)} files  {pr(tot)}')
        names = list(readers)
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                a, b = readers[names[i]], readers[names[j]]
                both = set(a) & set(b)
                if not both:
                    continue
                same = sum(1 for k in both if (a[k][0] == 0) == (b[k][0] == 0) and abs(a[k][0] - b[k][0]) <= 1)
                print(f'{names[i]} and {names[j]}: {same} of {len(both)} files agree (label, line within 1)')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('sample')
    s.add_argument('dir')
    s.set_defaults(fn=cmd_sample)
    s = sub.add_parser('score')
    s.add_argument('--atlabel', help='per-file verdicts of atlabel.py --tsv')
    s.add_argument('--show', action='store_true', help='print each disagreement with the labels')
    s.add_argument('out', nargs='+')
    s.set_defaults(fn=cmd_score)
    args = ap.parse_args()
    args.fn(args)


if __name__ == '__main__':
    main()
