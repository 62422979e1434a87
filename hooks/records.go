package hooks

import (
	"context"
	"fmt"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// RecordsMode is git config nwdes.push.records: whether the pre-push hook
// sends nwdes's records to the remote before git pushes an accepted
// branch.
type RecordsMode string

const (
	// RecordsAuto is the default: the hook sends the records (as git-lfs
	// sends its objects from pre-push), so that one git push of an
	// accepted commit lands on a server that judges it.
	RecordsAuto RecordsMode = ""
	// RecordsManual: the hook sends nothing; the records travel only by
	// git nwdes push, which must come first where the server judges.
	RecordsManual RecordsMode = "manual"
)

// ParseRecordsMode reads git config nwdes.push.records ("auto",
// "manual", or unset); anything else is refused, never taken for a
// default.
func ParseRecordsMode(v string, set bool) (RecordsMode, error) {
	switch {
	case !set || v == "auto":
		return RecordsAuto, nil
	case v == "manual":
		return RecordsManual, nil
	}
	return RecordsAuto, refusal.New(refusal.ConfigurationMalformed, "set git config nwdes.push.records to auto or manual, or unset it",
		"git config nwdes.push.records %q is not auto or manual", v)
}

// Send pushes the records of st to a named remote: remote.Replicator.Push (gitstore/remote),
// which fetches and merges first and never overwrites a remote update.
type Send func(ctx context.Context, st *gitstore.Store, remote string) (*gitstore.SyncReport, error)

// CheckAndSend is the pre-push hook's whole work: Check, then SendRecords of
// what the accepted refs were judged by, then, when sending merged the
// remote's records into this clone's (a newer examination there), Check
// again, so that the judgment reported is made on the records the remote
// now holds too.
func CheckAndSend(ctx context.Context, open func() (*gitstore.Store, error), p Policy, updates []Update, remote string, send Send) (*Report, *Sent, error) {
	var st *gitstore.Store
	once := func() (*gitstore.Store, error) {
		if st == nil {
			s, err := open()
			if err != nil {
				return nil, err
			}
			st = s
		}
		return st, nil
	}
	rep, err := Check(once, p, updates)
	if err != nil {
		return nil, nil, err
	}
	sent, err := SendRecords(ctx, p, rep, remote, func(ctx context.Context, remote string) (*gitstore.SyncReport, error) {
		s, err := once()
		if err != nil {
			return nil, err
		}
		return send(ctx, s, remote)
	})
	if err != nil || sent.Report == nil || !mergedAny(sent.Report) {
		return rep, sent, err
	}
	rep, err = Check(once, p, updates)
	return rep, sent, err
}

func mergedAny(r *gitstore.SyncReport) bool {
	for _, m := range r.Merged {
		if m.Action == gitstore.SyncFastForward || m.Action == gitstore.SyncMerged || m.Action == gitstore.SyncCreated {
			return true
		}
	}
	return false
}

// Sent is what SendRecords did.
type Sent struct {
	// Report is the push of the records, nil when none was made.
	Report *gitstore.SyncReport
	// Notice says why the records were not sent where the branch needs
	// them ("" when they were sent, or nothing needed them).
	Notice string
}

// SendRecords sends, from the pre-push hook and before git pushes the
// branch, the records the accepted refs of rep were judged by: every
// nwdes ref and the notes, to remote, in one atomic push of their own
// (git push --no-verify; remote.Replicator.Push). It sends nothing when the check
// refused some ref (a refusal changes nothing), when no protected ref was
// accepted (nothing depends on records), or under RecordsManual. A push to
// a URL that is not a named remote cannot carry them (their tracking refs
// need a name): Notice says so, and the push goes on, to be judged by the
// server. Any other failure to send refuses the push (RemoteFailed), with
// the remedy of sending them by hand.
func SendRecords(ctx context.Context, p Policy, rep *Report, remote string, send func(ctx context.Context, remote string) (*gitstore.SyncReport, error)) (*Sent, error) {
	if p.Records == RecordsManual || !rep.OK() || !acceptedAny(rep) {
		return &Sent{}, nil
	}
	sync, err := send(ctx, remote)
	if rf, ok := refusal.As(err); ok && rf.Name == refusal.MissingFact {
		return &Sent{Notice: fmt.Sprintf("the records were not sent: %q is not a named remote (%s); a server that judges the branch refuses it until they are there: git remote add NAME URL, then git push NAME",
			text.TerminalLine(remote), text.OneLine(rf.Detail))}, nil
	}
	if err != nil {
		detail := err.Error()
		if rf, ok := refusal.As(err); ok {
			detail = rf.Name + ": " + rf.Detail
		}
		return nil, refusal.NewUnavailable(refusal.RemoteFailed,
			fmt.Sprintf("send them yourself (git nwdes push %s), then push the branch again; or set git config nwdes.push.records=manual to keep them off the pre-push hook", remote),
			"the records the branch was accepted by could not be sent to %s before it, so the branch is not pushed: %s", remote, text.OneLine(detail)).Wrap(err)
	}
	return &Sent{Report: sync}, nil
}

func acceptedAny(rep *Report) bool {
	for _, r := range rep.Refs {
		if r.Verdict == Accepted {
			return true
		}
	}
	return false
}
