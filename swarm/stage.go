package swarm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	gitstage "github.com/nwdes/nwdes/gitstore/stage"
	"golang.org/x/sys/unix"
)

// jobDir is a staged job directory:
//
//	repo/          the checkout of the card's base, on branch worker/<label>
//	scratch/       the job's TMPDIR
//	home/          its HOME; data/ its XDG_DATA_HOME
//	prompt.md      the card, byte for byte, then the result contract
//	               (Contract): the harness's prompt
//	harness.log    what the harness wrote on stdout and stderr
//	RESULT.md      the harness's report (or the machinery's, when none)
//	exit.json, usage.tsv, timeline.tsv   written by the supervisor
type jobDir struct {
	Root, Repo, Scratch, Home, Data, Prompt string
	Log                                     *capWriter
	// Staged is what stage wrote in repo/.git that sealJob writes back.
	Staged stagedGit
	// Exam is set for an examine card's job (stageExamine), which has no
	// repo/: Repo is then its workspace, its working directory.
	Exam *examJob
	// Machine holds the premade files the supervisor writes once the job
	// has ended (machine.go), when a spare gave them.
	Machine machine
	// spare: the directories and spareFiles came from a spare.
	spare bool
}

// maxLog bounds harness.log: what passes it is counted, not kept.
const maxLog = 64 << 20

// stage makes the job directory of one attempt at card by worker w: its
// repository's config names w's identity (user.name, user.email), which
// sealing keeps. Its directories come from a spare (spare.go) when one is
// ready (nil: none).
func stage(st *gitstore.Store, export func(gitstore.CommitReader, oid.ID, string) error, c *Card, w *Worker, root string, sp *spares) (_ *jobDir, err error) {
	j := &jobDir{
		Root: root, Repo: filepath.Join(root, "repo"), Scratch: filepath.Join(root, "scratch"),
		Home: filepath.Join(root, "home"), Data: filepath.Join(root, "data"), Prompt: filepath.Join(root, "prompt.md"),
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return nil, err
	}
	// A spare's directories and files are there already.
	j.Machine, j.spare = sp.take(root)
	defer func() {
		if err != nil {
			j.Machine.drop()
		}
	}()
	if !j.spare {
		if err := os.Mkdir(root, 0o755); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{j.Repo, j.Scratch, j.Home, j.Data} {
		if err := os.Mkdir(d, 0o755); err != nil && !(j.spare && errors.Is(err, fs.ErrExist)) {
			return nil, err
		}
	}
	base, err := oid.Parse(c.Base)
	if err != nil {
		return nil, err
	}
	if err := gitstage.Repository(st.Git(), base, j.Repo, "worker/"+c.Label, func(dir string) error { return export(st, base, dir) }); err != nil {
		return nil, err
	}
	if err := addIdentity(filepath.Join(j.Repo, ".git", "config"), w); err != nil {
		return nil, err
	}
	if j.Staged, err = readStaged(filepath.Join(j.Repo, ".git")); err != nil {
		return nil, err
	}
	if err := j.writePrompt(Prompt(c, filepath.Join(root, ResultName))); err != nil {
		return nil, err
	}
	return j, j.openLog()
}

// writePrompt writes the job's prompt.md, read-only (a spare's empty file
// is written and then made so).
func (j *jobDir) writePrompt(b []byte) error {
	if err := os.WriteFile(j.Prompt, b, 0o444); err != nil {
		return err
	}
	if j.spare {
		return os.Chmod(j.Prompt, 0o444)
	}
	return nil
}

// openLog creates the job's harness.log (opens a spare's empty one: no
// job has run in the directory yet).
func (j *jobDir) openLog() error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if j.spare {
		flags = os.O_WRONLY | os.O_TRUNC | unix.O_NOFOLLOW
	}
	f, err := os.OpenFile(filepath.Join(j.Root, "harness.log"), flags, 0o644)
	if err != nil {
		return err
	}
	j.Log = &capWriter{f: f, max: maxLog}
	return nil
}

// capWriter writes to a file up to max bytes and counts the rest.
type capWriter struct {
	mu      sync.Mutex
	f       *os.File
	max, n  int64
	dropped int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.n
	if room <= 0 {
		c.dropped += int64(len(p))
		return len(p), nil
	}
	q := p
	if int64(len(q)) > room {
		q = q[:room]
		c.dropped += int64(len(p)) - room
	}
	n, err := c.f.Write(q)
	c.n += int64(n)
	if err != nil {
		return n, err
	}
	return len(p), nil
}

func (c *capWriter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		_, _ = io.WriteString(c.f, "\n[nwdes: "+strconv.FormatInt(c.dropped, 10)+" more bytes not kept]\n")
	}
	return c.f.Close()
}

// addIdentity appends w's git identity to the job repository's config,
// which stage wrote and nothing else has touched yet. Ident's names hold
// no quote, backslash or control character, so quoting them is enough.
func addIdentity(config string, w *Worker) error {
	name, email := w.Ident()
	if name == "" {
		return fmt.Errorf("worker %s has no usable identity", w.Name)
	}
	f, err := os.OpenFile(config, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "[user]\n\tname = \"%s\"\n\temail = \"%s\"\n", name, email)
	return errors.Join(err, f.Close())
}

// Prompt is the harness's prompt for card c: the card byte for byte
// (ended by a newline if it was not), then the result contract: where the
// report goes (resultPath, $NWDES_JOB_DIR/RESULT.md), its line 1 and 2,
// the bounds CheckResult enforces, and what becomes of commits.
func Prompt(c *Card, resultPath string) []byte {
	b := append([]byte{}, c.Text...)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return fmt.Appendf(b, `
---
The result contract (nwdes swarm)

When you stop, write your report to $NWDES_JOB_DIR/RESULT.md (%s):
  line 1, exactly this, byte for byte:
%s
  line 2: DONE, BLOCKED or ABSTAIN, alone or followed by one space and a
  short note (DONE: the task is done; BLOCKED: you could not do it;
  ABSTAIN: you decline it);
  then anything you want to say.
It must be UTF-8 with no NUL byte, at most %d bytes, %d lines and %d
bytes a line; anything else is refused, and no report at all counts as
blocked. A report is read, never run.
Commit your work in this repository with git commit (its identity is set):
the commit HEAD names when you stop is harvested, with its ancestors, and
recorded as the job's head. Build on the base; do not rewrite it.
`, resultPath, c.ContractLine, MaxResultSize, MaxResultLines, MaxResultLine)
}
