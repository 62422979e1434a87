package swarm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/gitstore"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
)

// transport serialises what one clone sends to and fetches from a remote
// on behalf of the swarm: git fetch updates the clone's tracking refs
// (refs/nwdes-remotes/<remote>/…), and two fetches (or a fetch and a
// lease's push) of one clone running at once fail each other on those
// refs' locks. One operation runs at a time per clone — in this process
// by a mutex, across processes (other supervisors of the clone) by an
// flock on <common dir>/nwdes/swarm/transport.lock — and fetches and
// pushes asked for while one runs are merged into the next one: every
// caller waits for an operation that started after it asked, so what it
// sees is at least as new as its question.
type transport struct {
	store *gitstore.Store
	// run is held while an operation runs in this process.
	run sync.Mutex
	mu  sync.Mutex // guards pending
	// pending is the next fetch or push, not yet started, that arrivals
	// join.
	pending *syncCall
}

type syncCall struct {
	push bool
	done chan struct{}
	err  error
}

func newTransport(st *gitstore.Store) *transport { return &transport{store: st} }

// exclusive runs fn alone among this clone's swarm transports.
func (t *transport) exclusive(fn func() error) error {
	t.run.Lock()
	defer t.run.Unlock()
	dir := filepath.Join(t.store.Location().CommonDir, "nwdes", "swarm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lock the swarm's transport: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "transport.lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("lock the swarm's transport: %w", err)
	}
	defer f.Close()
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("lock the swarm's transport: %w", err)
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return fn()
}

// sync fetches (or, with push, pushes, which fetches first) remote, as
// one operation with whatever other fetches and pushes were asked for
// meanwhile.
func (t *transport) sync(ctx context.Context, remote string, o gitstore.SyncOptions, push bool) error {
	t.mu.Lock()
	c := t.pending
	leader := c == nil
	if leader {
		c = &syncCall{done: make(chan struct{})}
		t.pending = c
	}
	c.push = c.push || push
	t.mu.Unlock()
	if leader {
		c.err = t.exclusive(func() error {
			t.mu.Lock()
			t.pending = nil // arrivals from now on wait for the next one
			push := c.push
			t.mu.Unlock()
			var err error
			if push {
				_, err = gitremote.New(t.store).Push(ctx, remote, o)
			} else {
				_, err = gitremote.New(t.store).Fetch(ctx, remote, o)
			}
			return err
		})
		close(c.done)
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
