package hooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/hooks"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

func TestTheReferenceTransactionProtocolIsReadExactly(t *testing.T) {
	input := z40 + " " + a40 + " refs/heads/main\n" +
		z40 + " " + a40 + " HEAD\n" +
		a40 + " " + z40 + " refs/heads/old\n" +
		z40 + " ref:refs/heads/main refs/heads/alias\n" +
		"ref:refs/heads/a " + a40 + " refs/heads/b\n"
	us, syms, err := hooks.ParseTransaction(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || us[0].RemoteRef != "refs/heads/main" || us[0].LocalOID != a40 || !us[1].Delete() {
		t.Fatalf("updates %+v", us)
	}
	want := []hooks.SymbolicUpdate{{Ref: "refs/heads/alias", NewTarget: "refs/heads/main"}, {Ref: "refs/heads/b", OldTarget: "refs/heads/a"}}
	if len(syms) != 2 || syms[0] != want[0] || syms[1] != want[1] {
		t.Fatalf("symbolic updates %+v", syms)
	}
	for _, bad := range []string{
		z40 + " " + a40 + "\n",
		z40 + " " + a40[:39] + " refs/heads/main\n",
		z40 + " ref: refs/heads/main\n",
		"ref: " + a40 + " refs/heads/x\n",
		z40 + " " + z64 + " refs/heads/main\n",
	} {
		if _, _, err := hooks.ParseTransaction(strings.NewReader(bad)); !refusal.Named(err, refusal.InputUnreadable) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestNoSymbolicRefIsMadeToOrAsAProtectedBranchOrANwdesRef(t *testing.T) {
	rc := hooks.Receive{Policy: hooks.Policy{Protect: hooks.DefaultProtect}}
	for _, c := range []struct {
		s       hooks.SymbolicUpdate
		refused bool
	}{
		{hooks.SymbolicUpdate{Ref: "refs/heads/alias", NewTarget: "refs/heads/main"}, true},
		{hooks.SymbolicUpdate{Ref: "refs/heads/main", NewTarget: "refs/heads/dev"}, true},
		{hooks.SymbolicUpdate{Ref: "refs/heads/alias", OldTarget: "refs/heads/main"}, true},
		{hooks.SymbolicUpdate{Ref: "refs/heads/x", NewTarget: "refs/nwdes/examine"}, true},
		{hooks.SymbolicUpdate{Ref: "refs/heads/alias", NewTarget: "refs/heads/dev"}, false},
	} {
		res := rc.CheckSymbolic([]hooks.SymbolicUpdate{c.s})
		if len(res) != 1 || (res[0].Verdict == hooks.Refused) != c.refused {
			t.Errorf("%+v: %+v", c.s, res)
		}
	}
}

func TestTheTransactionHookChecksOnlyPreparedTransactionsAndAlwaysRunsTheChainedHook(t *testing.T) {
	dir := hooksDir(t)
	os.MkdirAll(dir, 0o755)
	chainedLog := filepath.Join(t.TempDir(), "chained.log")
	os.WriteFile(filepath.Join(dir, hooks.ReferenceTransaction), []byte("#!/bin/sh\nprintf '%s|' \"$@\" >> "+chainedLog+"\ncat >> "+chainedLog+"\n"), 0o755)
	if _, err := hooks.TransactionHook.Install(dir); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(dir, hooks.ReferenceTransaction)
	input := z40 + " " + a40 + " refs/heads/main\n"
	bin, nwLog := fakeNwdes(t, 0)
	if _, code := runHook(t, hook, bin+":/usr/bin:/bin", input, "committed"); code != 0 {
		t.Fatalf("committed: exit %d", code)
	}
	if _, err := os.Stat(nwLog); err == nil {
		t.Fatal("nwdes ran for a committed transaction")
	}
	if _, code := runHook(t, hook, bin+":/usr/bin:/bin", input, "prepared"); code != 0 {
		t.Fatalf("prepared: exit %d", code)
	}
	if got, _ := os.ReadFile(nwLog); string(got) != "hook|reference-transaction|prepared|"+input {
		t.Fatalf("nwdes got %q", got)
	}
	if got, _ := os.ReadFile(chainedLog); string(got) != "committed|"+input+"prepared|"+input {
		t.Fatalf("chained hook got %q", got)
	}
	bin, _ = fakeNwdes(t, 1)
	if _, code := runHook(t, hook, bin+":/usr/bin:/bin", input, "prepared"); code != 1 {
		t.Fatalf("a refusal by nwdes: exit %d", code)
	}
	out, code := runHook(t, hook, "/usr/bin:/bin", input, "prepared")
	if code == 0 || !strings.Contains(out, "git-nwdes is not on PATH") {
		t.Fatalf("without git-nwdes: exit %d: %s", code, out)
	}
}

func TestTheServerTakesNoRefThatStaysInAClone(t *testing.T) {
	r := newCandidateRepo(t)
	rc := hooks.Receive{Policy: hooks.Policy{Protect: hooks.DefaultProtect}}
	for _, ref := range []string{"refs/nwdes-local/drafts", "refs/nwdes-remotes/origin/nwdes/examine", "refs/nwdes-other/x"} {
		rep, err := rc.Check(r.open, []hooks.Update{update(ref, r.accepted, ref)})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || !strings.HasPrefix(rep.Refs[0].Why, refusal.RefNeverTravels+": ") {
			t.Errorf("%s: %+v", ref, rep.Refs)
		}
		del := hooks.Update{LocalRef: ref, LocalOID: z40, RemoteRef: ref, RemoteOID: r.accepted}
		if rep, err := rc.Check(r.open, []hooks.Update{del}); err != nil || !rep.OK() {
			t.Errorf("deleting %s: %v %+v", ref, err, rep)
		}
	}
}

func TestANewProtectedBranchIsJudgedAgainstAnExplicitSource(t *testing.T) {
	r := newCandidateRepo(t)
	p := hooks.Policy{Protect: hooks.DefaultProtect}
	// No protected branch on the server: only the named default branch
	// may be created, judged by its own commit's contracts.
	for _, c := range []struct {
		def  string
		ref  string
		pass bool
	}{
		{"", "refs/heads/main", false},
		{"refs/heads/main", "refs/heads/master", false},
		{"refs/heads/main", "refs/heads/main", true},
	} {
		gitDel(t, r.dir, "refs/heads/main")
		rc := hooks.Receive{Policy: p, DefaultBranch: gitstoreRef(c.def)}
		rep, err := rc.Check(r.open, []hooks.Update{update(c.ref, r.accepted, c.ref)})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() != c.pass || !c.pass && !strings.HasPrefix(rep.Refs[0].Why, refusal.BranchUnsourced+": ") {
			t.Errorf("default %q, new %s: %+v", c.def, c.ref, rep.Refs)
		}
	}
	if _, err := (hooks.Receive{Policy: p, DefaultBranch: "refs/heads/develop"}).Check(r.open, nil); !refusal.Named(err, refusal.ConfigurationMalformed) {
		t.Errorf("an unprotected default branch: %v", err)
	}
}

func gitDel(t *testing.T, dir, ref string) {
	t.Helper()
	gittest.Git(t, dir, "update-ref", "-d", ref)
}

func gitstoreRef(s string) gitstore.RefName { return gitstore.RefName(s) }
