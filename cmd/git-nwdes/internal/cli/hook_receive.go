package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/hooks"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
)

func (s *session) hookPreReceiveCmd() *cli.Command {
	return &cli.Command{
		Name:      "pre-receive",
		Usage:     "check a push on the server: protected branches only to accepted commits, nwdes records append-only",
		UsageText: "git nwdes hook pre-receive < pre-receive input",
		Description: `Run by a server's pre-receive hook (or a forge's server hook) in the
receiving repository. Reads git's pre-receive input on stdin, one line per ref:
"<old oid> <new oid> <ref>". The pushed objects are read from git's quarantine.

A protected branch (nwdes.protect, default main and master) may only move to a
commit whose every feature has an accepted examination in the records as they
will be after this push (the ones pushed with it, else the server's) — and,
when the branch's current tip holds a signing policy
(.nwave/trust/allowed_signers), signed by a key it allows (docs/trust.md).
nwdes's records are append-only here: refs/nwdes/* and the notes move only
forward, never deleted or forced; leases (swap refs) move freely; an
undeclared refs/nwdes/ ref is refused, and so is any ref under refs/nwdes-local/,
refs/nwdes-remotes/ or another refs/nwdes-* (RefNeverTravels). A name is
judged as the ref it moves (a symbolic ref on the server is followed). A new
protected branch is judged against git config nwdes.defaultBranch and every
protected branch whose tip it contains; with none it is refused
(BranchUnsourced). Unlike the client's pre-push hook, no --no-verify skips
this. Exit 1 refuses the whole push.

EXAMPLES
   # hooks/pre-receive of a bare repository
   #!/bin/sh
   exec git nwdes hook pre-receive
` + exitStatus(judges("the push is refused")),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("pre-receive takes no arguments, got %d", c.NArg())
			}
			return s.hookPreReceive(c.Context)
		},
	}
}

func (s *session) hookPreReceive(ctx context.Context) error {
	in := boundedio.NewReader(s.env.Stdin, "the pre-receive hook's stdin", hookInputLimit)
	updates, err := hooks.ParseReceive(in)
	if err := in.Err(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if len(updates) == 0 {
		return nil
	}
	rep, err := s.runServerCheck(ctx, updates, nil, false)
	if err != nil {
		return err
	}
	if !rep.OK() {
		return negative("push refused")
	}
	return nil
}

// transactionOptions are hook reference-transaction's argument: the
// transaction's state.
type transactionOptions struct {
	State string
}

func (s *session) hookTransactionCmd() *cli.Command {
	return &cli.Command{
		Name:      hooks.ReferenceTransaction,
		Usage:     "check a ref transaction on the server before git writes it: the pre-receive rules, with the records as they will be",
		UsageText: "git nwdes hook reference-transaction STATE < reference-transaction input",
		Description: `Run by the server's reference-transaction hook (installed with hooks install
--server), which git runs for every ref transaction in the repository. In the
state "prepared" — every ref of the transaction locked and its old value
checked, none written — it reads git's lines on stdin ("<old value> <new
value> <ref>") and applies pre-receive's rules to them again, with the records
as they will be once the transaction commits: those it writes, else the
server's as they are now. git writes the refs of a push that is not --atomic
one transaction each, after pre-receive has run: this is what keeps a
protected branch from landing when the records that accepted it do not. In
any other state it does nothing. Exit 1 makes git abort the transaction; git's
receive-pack then stops the push ("ref updates aborted by hook").

EXAMPLES
   # hooks/reference-transaction of a bare repository
   #!/bin/sh
   [ "$1" = prepared ] || exit 0
   exec git nwdes hook reference-transaction "$@"
` + exitStatus(judges("the ref update is refused")),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("reference-transaction takes the transaction's state, got %d arguments", c.NArg())
			}
			return s.hookTransaction(c.Context, transactionOptions{State: c.Args().First()})
		},
	}
}

func (s *session) hookTransaction(ctx context.Context, o transactionOptions) error {
	if o.State != "prepared" {
		return nil
	}
	updates, syms, err := hooks.ParseTransaction(s.env.Stdin)
	if err != nil {
		return err
	}
	if len(updates) == 0 && len(syms) == 0 {
		return nil
	}
	rep, err := s.runServerCheck(ctx, updates, syms, true)
	if err != nil {
		return err
	}
	if !rep.OK() {
		return negative("ref update refused")
	}
	return nil
}

// runServerCheck runs the server's check (hooks.Receive) of updates, as
// pre-receive or, written, as reference-transaction, and prints each
// ref's result and the notes on how it was judged on stderr (git shows
// pre-receive's to the pusher; reference-transaction's reach the pusher
// only where receive-pack's own stderr does: file://, ssh).
func (s *session) runServerCheck(ctx context.Context, updates []hooks.Update, syms []hooks.SymbolicUpdate, written bool) (*hooks.Report, error) {
	loc, set, err := s.hookSettings(ctx)
	if err != nil {
		return nil, hooks.FailClosed("the push", err)
	}
	set.Policy.Now = s.env.Now
	rc := hooks.Receive{Policy: set.Policy, DefaultBranch: set.DefaultBranch, Written: written}
	rep, err := rc.Check(func() (*gitstore.Store, error) { return s.openAt(loc) }, updates)
	if err != nil {
		return nil, err
	}
	rep.Refs = append(rep.Refs, rc.CheckSymbolic(syms)...)
	for _, r := range rep.Refs {
		if r.Verdict == hooks.Pass {
			continue
		}
		for _, n := range r.Notes {
			fmt.Fprint(s.env.Stderr, text.Terminal("nwdes: "+n+"\n"))
		}
		switch {
		case r.Verdict == hooks.Accepted:
			fmt.Fprint(s.env.Stderr, text.Terminal(hooks.Summary(r)))
		case written:
			fmt.Fprint(s.env.Stderr, text.Terminal(hooks.ExplainWritten(r)))
		default:
			fmt.Fprint(s.env.Stderr, text.Terminal(hooks.ExplainOnServer(r)))
		}
	}
	return rep, nil
}
