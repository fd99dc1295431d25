"""The README workmem writes into every shared projection folder (docs/decisions.md#d17)."""

from __future__ import annotations

from typing import Final

README: Final = """\
# .workmem — this repository's shared memory

This folder is written by workmem, the working memory of the
AI coding agents used on this repository. Each file under `memories/` is one thing the agents (or
people) learned about this project: a decision, a project fact or a reference. Commit the folder:
a teammate's agent starts with what yours learned.

    memories/<type>/<id>.md   one memory: frontmatter, then its text
    tombstones.jsonl          hashes of forgotten memories (never their text)

## Editing

The files are meant to be read, reviewed and edited. `workmem sync` (and every agent session
start) takes your edits back, through the same checks as every other memory:

- edit the text below the frontmatter to correct a memory (the old text is kept in history);
- set `status: forgotten` (or delete the file) to forget it; `status: active` brings it back;
- set `scope: personal` to keep it to yourself (its file then leaves this folder);
- add a file `memories/<type>/<anything>.md` with `type:` and a text to add a memory; workmem
  gives it an id and moves it to `memories/<type>/<id>.md`.

A file workmem cannot read (a merge conflict, broken frontmatter, an unknown type) or whose text it
refuses (a password or token in it, an instruction to the agent) is left as it is, never
overwritten, and listed by `workmem sync` and `workmem health` with its line. Fix it and run
`workmem sync` again.

Keys workmem does not know are kept. `identity` is a hash of the text, used to recognise the same
fact written in two clones; leave it to workmem.

## What is not here

How strong each memory is, how often it was used and what each session holds are different on each
machine, so they stay in each person's workmem data directory and never reach git.

## Merging

`workmem install git` registers a merge driver (`.gitattributes`, `.git/config`) that merges these
files field by field, so two people editing different fields of one memory never conflict. Without
it, git's own merge still works file by file.
"""
