package swarm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Making a file or a directory is most of what staging a job costs where
// the file system makes them slowly (a few hundred microseconds to a
// millisecond each on a virtual machine's disk; docs/performance.md). The
// directories of a job directory do not depend on its card, so while one
// job runs the supervisor makes the next one's in the background: a
// spare, which stage renames into place (a rename is cheap) instead of
// making its directories one by one.
//
// Spares live beside the jobs directory, in <jobs dir>.spare/, named
// <pid namespace>-<pid>-<start>-<nonce> after the supervisor process that
// made them, never inside a job's write set. A spare is the job directory
// to be (only empty directories and the empty files spareFiles names);
// beside it, named <spare>.<name>, wait the empty files machineFiles
// names: what the supervisor writes in the job directory once the job has
// ended, filled where the job never reaches and renamed into place
// (machine.go). All are made by the supervisor. The ones a supervisor did not use are
// removed when its run ends; the ones a killed supervisor left are
// removed by the next run on the same jobs directory (in the same pid
// namespace) once that process is gone, so no spare is removed while its
// maker may take it.

// spareDirs are the directories of a job directory (relative to it) that
// stage makes whatever the card: its own, then the git directory's
// (gitstore/stage makes these with MkdirAll, so made ones are no change;
// it writes the job's branch into packed-refs, so no refs/heads/worker/
// is needed).
var spareDirs = []string{"repo", "scratch", "home", "data", "repo/.git", "repo/.git/objects", "repo/.git/objects/info",
	"repo/.git/refs"}

// spareFiles are the files stage writes whatever the card (gitstore/stage
// writes them with os.WriteFile, which truncates a file that is there;
// stage writes the prompt and opens the log the same way): made empty in
// a spare, writing them makes no file.
var spareFiles = []string{"repo/.git/HEAD", "repo/.git/config", "repo/.git/objects/info/alternates", "repo/.git/packed-refs",
	"prompt.md", "harness.log"}

// spares is a supervisor's pool of spare job directories.
type spares struct {
	dir  string // <jobs dir>.spare
	self Holder

	mu    sync.Mutex
	ready []string
	wg    sync.WaitGroup
	swept bool
}

// newSpares is the pool of a supervisor of jobsDir; none (nil) without one.
func newSpares(jobsDir string, self Holder) *spares {
	if jobsDir == "" {
		return nil
	}
	return &spares{dir: filepath.Clean(jobsDir) + ".spare", self: self}
}

// make makes one spare in the background (at most max ready at once).
func (p *spares) make(max int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if len(p.ready) >= max {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.sweep()
		d := filepath.Join(p.dir, fmt.Sprintf("%d-%d-%d-%s", p.self.NS, p.self.PID, p.self.Start, newNonce()))
		if err := os.MkdirAll(p.dir, 0o755); err != nil {
			return
		}
		if err := os.Mkdir(d, 0o755); err != nil {
			return
		}
		for _, s := range spareDirs {
			if err := os.Mkdir(filepath.Join(d, s), 0o755); err != nil {
				_ = os.RemoveAll(d)
				return // staging makes them itself
			}
		}
		var files []string
		for _, s := range spareFiles {
			files = append(files, filepath.Join(d, s))
		}
		m := machine{prefix: d}
		for _, s := range machineFiles {
			files = append(files, m.premade(s))
		}
		for _, f := range files {
			f, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err == nil {
				err = f.Close()
			}
			if err != nil {
				_ = os.RemoveAll(d)
				m.drop()
				return
			}
		}
		p.mu.Lock()
		p.ready = append(p.ready, d)
		p.mu.Unlock()
	}()
}

// take moves a spare's job directory to root (which must not exist) and
// returns the machine files left beside it (the caller removes them with
// drop once the job is recorded); ok is false when none is ready, or the
// rename fails (another file system): the caller makes the directories
// itself, and writes its machine files by making them.
func (p *spares) take(root string) (m machine, ok bool) {
	if p == nil {
		return machine{}, false
	}
	p.mu.Lock()
	if len(p.ready) == 0 {
		p.mu.Unlock()
		return machine{}, false
	}
	d := p.ready[len(p.ready)-1]
	p.ready = p.ready[:len(p.ready)-1]
	p.mu.Unlock()
	// Never over a directory already there, as Mkdir would not.
	if err := renameNoReplace(d, root); err != nil {
		_ = os.RemoveAll(d)
		machine{prefix: d}.drop()
		return machine{}, false
	}
	return machine{prefix: d}, true
}

// close waits for the spares being made and removes every one left.
func (p *spares) close() {
	if p == nil {
		return
	}
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.ready {
		_ = os.RemoveAll(d)
		machine{prefix: d}.drop()
	}
	p.ready = nil
	_ = os.Remove(p.dir) // when empty: other supervisors' spares stay
}

// sweep removes, once a run, the spares of supervisor processes that are
// gone.
func (p *spares) sweep() {
	p.mu.Lock()
	if p.swept {
		p.mu.Unlock()
		return
	}
	p.swept = true
	p.mu.Unlock()
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		f := strings.SplitN(e.Name(), "-", 4)
		if len(f) != 4 || f[0] != strconv.FormatUint(p.self.NS, 10) {
			continue // not one of this pid namespace's: left alone
		}
		pid, err1 := strconv.Atoi(f[1])
		start, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || (pid == p.self.PID && start == p.self.Start) {
			continue
		}
		if !alive(Holder{PID: pid, Start: start}) {
			_ = os.RemoveAll(filepath.Join(p.dir, e.Name()))
		}
	}
}
