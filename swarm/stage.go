package swarm

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// jobDir is a staged job directory:
//
//	repo/          the checkout of the card's base, on branch worker/<label>
//	scratch/       the job's TMPDIR
//	home/          its HOME; data/ its XDG_DATA_HOME
//	prompt.md      the card, byte for byte: the harness's prompt
//	harness.log    what the harness wrote on stdout and stderr
//	RESULT.md      the harness's report (or the machinery's, when none)
//	exit.json, usage.tsv, timeline.tsv   written by the supervisor
type jobDir struct {
	Root, Repo, Scratch, Home, Data, Prompt string
	Log                                     *capWriter
	// Staged is what stage wrote in repo/.git that sealJob writes back.
	Staged stagedGit
}

// maxLog bounds harness.log: what passes it is counted, not kept.
const maxLog = 64 << 20

// stage makes the job directory of one attempt at card.
func stage(st *gitstore.Store, export func(*gitstore.Store, oid.ID, string) error, c *Card, root string) (*jobDir, error) {
	j := &jobDir{
		Root: root, Repo: filepath.Join(root, "repo"), Scratch: filepath.Join(root, "scratch"),
		Home: filepath.Join(root, "home"), Data: filepath.Join(root, "data"), Prompt: filepath.Join(root, "prompt.md"),
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, err
	}
	for _, d := range []string{j.Repo, j.Scratch, j.Home, j.Data} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	base, err := oid.Parse(c.Base)
	if err != nil {
		return nil, err
	}
	if err := st.StageRepository(base, j.Repo, "worker/"+c.Label, func(dir string) error { return export(st, base, dir) }); err != nil {
		return nil, err
	}
	if j.Staged, err = readStaged(filepath.Join(j.Repo, ".git")); err != nil {
		return nil, err
	}
	if err := os.WriteFile(j.Prompt, c.Text, 0o444); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(root, "harness.log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	j.Log = &capWriter{f: f, max: maxLog}
	return j, nil
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
