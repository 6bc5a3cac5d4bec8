#!/usr/bin/env python3
"""tests/realprompts/blind/alarms/alarms.py: the alarm survey (BLIND.md,
"Alarms in directory mode"). Runs promptlint in directory mode over whole
public repositories and scores each surveyed file's first error with the
readers' verdicts: the same line and field keeps its verdict; a file with no
error left has lost that alarm; a new first error is listed to be judged.

  alarms.py TREE [BINARY]

TREE holds one folder per repository named owner+name, each the snapshot of
REPOS.tsv (`git archive COMMIT | tar x`). BINARY defaults to bin/promptlint.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))


def tsv(name):
    with open(os.path.join(HERE, name), encoding='utf-8') as f:
        return [l.rstrip('\n').split('\t') for l in f if l.strip()]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tree = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, 'bin', 'promptlint')
    out = subprocess.run([binary, '--isolated', '--no-model', '--format', 'json', '.'], cwd=tree,
                         capture_output=True).stdout
    first = {}
    for f in json.loads(out)['findings']:
        if f['severity'] == 'error' and f['file'][2:] not in first:
            first[f['file'][2:]] = f
    for part, readers in (('sample', 'RS'), ('holdout', 'TU')):
        v = [{r[0]: r[1] for r in tsv(f'{part}-OUT-{x}.tsv')} for x in readers]
        tally = {}
        for fid, repo, path, line, flagged in tsv(f'{part}-ITEMS.tsv'):
            both = v[0][fid] if v[0][fid] == v[1][fid] else 'split'
            f = first.get(repo.replace('/', '+') + '/' + path)
            if f is None:
                key = f'no error now ({both} before)'
            elif str(f['line']) == line and flagged.rstrip('.') in f['message']:
                key = both
            else:
                key = 'new first error, to judge'
                print(f'  {part} {fid}: {repo}/{path}:{f["line"]}: {f["message"][:100]}')
            tally[key] = tally.get(key, 0) + 1
        t, fa = tally.get('TRUE', 0), tally.get('FALSE', 0)
        print(f'{part}: ' + ', '.join(f'{k} {n}' for k, n in sorted(tally.items())) +
              (f'; precision on agreed verdicts {t / (t + fa):.3f}' if t + fa else ''))


if __name__ == '__main__':
    main()
