package swarm

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/sandbox"
)

// Reaped is what Reap did.
type Reaped struct {
	// Removed are the job directories removed (or, dry, that would be).
	Removed []string `json:"removed"`
	// Kept are the directories left, each with why.
	Kept []string `json:"kept"`
}

var attemptDir = lazyre.New(`^[1-9][0-9]{0,6}-[0-9a-f]{16}$`)

// Reap removes job directories under jobsDir older than olderThan: those
// of recorded jobs (the record, with its exit.json and RESULT.md, stays in
// refs/nwdes/swarm/jobs), and those of attempts that never recorded (a
// killed supervisor's) whose card no live lease holds with that nonce. A
// directory with a file system mounted inside it, or whose name is not a
// job's, is kept and named; nothing is followed through a link.
func Reap(ctx context.Context, st gitstore.RecordReader, book Book, jobsDir string, here Holder, olderThan time.Duration, now time.Time, dry bool) (*Reaped, error) {
	jobs, err := Jobs(st)
	if err != nil {
		return nil, err
	}
	recorded := map[string]time.Time{} // nonce -> ended
	for _, j := range jobs {
		t, _ := time.Parse(stamp, j.Ended)
		recorded[j.Nonce] = t
	}
	entries, err := book.List(ctx)
	if err != nil {
		return nil, err
	}
	held := map[string]bool{} // nonces of leases that still hold
	for _, e := range entries {
		if e.Lease != nil && !StateOf(e.Lease, 0, here, now, 0).Takeable() {
			held[e.Lease.Nonce] = true
		}
	}
	out := &Reaped{Removed: []string{}, Kept: []string{}}
	labels, err := os.ReadDir(jobsDir)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, l := range labels {
		ldir := filepath.Join(jobsDir, l.Name())
		if !l.IsDir() || !names.Component(l.Name(), maxLabel) {
			out.Kept = append(out.Kept, ldir+" (not a card's directory)")
			continue
		}
		attempts, err := os.ReadDir(ldir)
		if err != nil {
			return nil, err
		}
		for _, a := range attempts {
			dir := filepath.Join(ldir, a.Name())
			if !a.IsDir() || !attemptDir.MatchString(a.Name()) {
				out.Kept = append(out.Kept, dir+" (not a job directory)")
				continue
			}
			nonce := a.Name()[strings.IndexByte(a.Name(), '-')+1:]
			when, isRecorded := recorded[nonce]
			if !isRecorded {
				if held[nonce] {
					out.Kept = append(out.Kept, dir+" (its job holds its lease)")
					continue
				}
				fi, err := a.Info()
				if err != nil {
					return nil, err
				}
				when = fi.ModTime()
			}
			if now.Sub(when) < olderThan {
				continue
			}
			if m := sandbox.MountsUnder(dir); len(m) > 0 {
				out.Kept = append(out.Kept, dir+" (a file system is mounted at "+strings.Join(m, ", ")+")")
				continue
			}
			if !dry {
				if err := sandbox.RemoveAll(dir); err != nil {
					out.Kept = append(out.Kept, dir+" (cannot remove: "+err.Error()+")")
					continue
				}
			}
			out.Removed = append(out.Removed, dir)
		}
		if !dry {
			_ = os.Remove(ldir) // only when empty
		}
	}
	sort.Strings(out.Removed)
	return out, nil
}
