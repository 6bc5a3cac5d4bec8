#!/usr/bin/env python3
"""tests/realprompts/blind/names/names.py: would a perfect lexicon of
placeholder names close issue 14's gap? (BLIND.md, "Names alone").

  names.py collect [--cache-dir D]   rerun promptlint at labelling (the
        binaries atlabel.py builds) on the dev files of v2.. and write
        atlabel-findings.jsonl (per file: label line, error lines, PL008
        warnings with the placeholder) and NAMES.tsv (the placeholders)
  names.py sim OUT-P.tsv [OUT-Q.tsv]  the at-labelling score when the PL008
        warnings whose name a reader judged V (volatile) count as errors

Dev files only (atlabel.DevOnly refuses held ones).
"""
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, CORPUS)
import atlabel  # noqa: E402


def collect(cache):
    root = os.path.dirname(os.path.dirname(CORPUS))
    with open(os.path.join(CORPUS, 'LABELS.tsv'), encoding='utf-8') as fh:
        rows = atlabel.parse_labels(fh.read())
    corpus, src = atlabel.DevOnly(root, rows), atlabel.upstream_paths(root)
    found = atlabel.labelling_commits(root, 'HEAD')
    batches = sorted((b for b in found if b != 'v1'), key=atlabel.batch_num)
    bins = atlabel.build_all(root, [found[b] for b in batches], cache, 2)
    names = set()
    with open(os.path.join(HERE, 'atlabel-findings.jsonl'), 'w', encoding='utf-8') as out:
        for b in batches:
            for r in (r for r in rows if r['batch'] == b):
                with corpus.open(r['file']) as fh:
                    p = subprocess.run([bins[found[b]], '--isolated', '--no-model', '--format', 'json',
                                        '--stdin-filename', src[r['file']], '-'], stdin=fh, capture_output=True)
                js = json.loads(p.stdout.decode('utf-8', 'replace'))
                fs = js['findings'] if isinstance(js, dict) else js
                w8 = []
                for f in fs:
                    if f.get('rule') == 'PL008' and f.get('severity') == 'warning':
                        m = re.search(r"'(.*?)'", f['message'])
                        w8.append((f['line'], m.group(1) if m else f['message'][:60]))
                        names.add(w8[-1][1])
                L = r['line'] if r['label'] == 'positive' else 0
                errs = [f['line'] for f in fs if f.get('severity') == 'error']
                out.write(json.dumps(dict(batch=b, file=r['file'], L=L, errs=errs, w8=w8)) + '\n')
    names = sorted(names)
    random.Random(7).shuffle(names)
    with open(os.path.join(HERE, 'NAMES.tsv'), 'w', encoding='utf-8') as f:
        for i, n in enumerate(names):
            f.write(f'N{i + 1:03d}\t{n}\n')


def sim(outs):
    with open(os.path.join(HERE, 'NAMES.tsv'), encoding='utf-8') as f:
        ids = {l.rstrip('\n').split('\t')[1]: l.split('\t')[0] for l in f}
    judged = []
    for o in outs:
        with open(o, encoding='utf-8') as f:
            judged.append({l.split('\t')[0]: l.split('\t')[1].strip() for l in f if l.strip()})

    def run(pick):
        t = [0, 0, 0]
        with open(os.path.join(HERE, 'atlabel-findings.jsonl'), encoding='utf-8') as f:
            for l in f:
                d = json.loads(l)
                v = atlabel.verdict(d['L'], d['errs'] + [ln for ln, nm in d['w8'] if pick(ids[nm])])
                t = [a + b for a, b in zip(t, v)]
        tp, fp, fn = t
        return f'{tp}/{fp}/{fn}  P {tp / (tp + fp):.3f}  R {tp / (tp + fn):.3f}'

    print(f'{"errors only":34} {run(lambda i: False)}')
    print(f'{"+ every PL008 warning":34} {run(lambda i: True)}')
    for o, j in zip(outs, judged):
        print(f'{"+ PL008 judged V by " + os.path.basename(o):34} {run(lambda i: j.get(i) == "V")}')
        print(f'{"+ PL008 judged V or ? by " + os.path.basename(o):34} {run(lambda i: j.get(i) in ("V", "?"))}')
    if len(judged) > 1:
        a, b = judged[0], judged[1]
        print(f'{"+ PL008 judged V by both":34} {run(lambda i: a.get(i) == "V" and b.get(i) == "V")}')
        print(f'readers agree on {sum(a[k] == b.get(k) for k in a)} of {len(a)} names')


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == 'collect':
        cache = os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'cachet-atlabel')
        if len(sys.argv) == 4 and sys.argv[2] == '--cache-dir':
            cache = sys.argv[3]
        collect(cache)
    elif len(sys.argv) >= 3 and sys.argv[1] == 'sim':
        sim(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
