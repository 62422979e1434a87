package hooks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/hooks"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

var (
	z40 = strings.Repeat("0", 40)
	z64 = strings.Repeat("0", 64)
	a40 = strings.Repeat("a", 40)
)

func TestThePrePushProtocolIsReadExactly(t *testing.T) {
	input := "refs/heads/main " + a40 + " refs/heads/main " + z40 + "\n" +
		"HEAD~1 " + a40 + " refs/heads/topic " + a40 + "\n" +
		"(delete) " + z40 + " refs/heads/old " + a40 + "\n" +
		":/fix the bug " + a40 + " refs/heads/fix " + z40 + "\n" +
		"(delete) " + z64 + " refs/heads/sha256 " + strings.Repeat("b", 64) + "\n"
	us, err := hooks.ParseUpdates(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 5 || us[1].LocalRef != "HEAD~1" || !us[2].Delete() || us[0].Delete() || us[3].LocalRef != ":/fix the bug" || !us[4].Delete() {
		t.Fatalf("parsed %+v", us)
	}
	if us, err := hooks.ParseUpdates(strings.NewReader("")); err != nil || len(us) != 0 {
		t.Fatalf("empty input: %v %v", us, err)
	}
	for _, bad := range []string{
		"refs/heads/main " + a40 + " refs/heads/main\n",
		"refs/heads/main " + a40[:39] + " refs/heads/main " + z40 + "\n",
		"refs/heads/main " + strings.ToUpper(a40) + " refs/heads/main " + z40 + "\n",
		"refs/heads/main " + a40 + " main " + z40 + "\n",
		"refs/heads/main " + a40 + " refs/heads/main " + z64 + "\n",
	} {
		if _, err := hooks.ParseUpdates(strings.NewReader(bad)); !refusal.Named(err, "InputUnreadable") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestProtectedRefsDefaultToMainAndMasterAndAreConfigurable(t *testing.T) {
	def, err := hooks.PolicyFrom(&gitrepo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]bool{
		"refs/heads/main": true, "refs/heads/master": true, "refs/heads/topic": false,
		"refs/tags/v1": false, "refs/nwdes/examine": false, "refs/notes/nwdes": false,
	} {
		if def.Protected(ref) != want {
			t.Errorf("default: %s protected = %v", ref, !want)
		}
	}
	p := policy(t, "trunk", "refs/heads/release/*", "refs/tags/v*", "refs/*")
	for ref, want := range map[string]bool{
		"refs/heads/trunk": true, "refs/heads/main": false, "refs/heads/release/1.0": true,
		"refs/heads/release/1/x": false, "refs/tags/v1.2": true, "refs/nwdes/examine": false, "refs/notes/nwdes": false,
	} {
		if p.Protected(ref) != want {
			t.Errorf("configured: %s protected = %v", ref, !want)
		}
	}
	if _, err := hooks.PolicyFrom(configWith(t, "nwdes.protect", "refs/heads/[")); !refusal.Named(err, "ConfigurationMalformed") {
		t.Fatalf("bad pattern: %v", err)
	}
}

func configWith(t *testing.T, key string, vals ...string) *gitrepo.Config {
	t.Helper()
	f := filepath.Join(t.TempDir(), "cfg")
	sec, name, _ := strings.Cut(key, ".")
	text := "[" + sec + "]\n"
	for _, v := range vals {
		text += "\t" + name + " = " + v + "\n"
	}
	os.WriteFile(f, []byte(text), 0o644)
	cfg, err := gitrepo.ReadConfig(gitrepo.Location{CommonDir: t.TempDir(), GitDir: t.TempDir()}, func(k string) string {
		return map[string]string{"GIT_CONFIG_GLOBAL": f, "GIT_CONFIG_NOSYSTEM": "1"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func policy(t *testing.T, vals ...string) hooks.Policy {
	t.Helper()
	p, err := hooks.PolicyFrom(configWith(t, "nwdes.protect", vals...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// candidateRepo is a repository whose commits carry contracts and
// examinations: accepted, rejected, unexamined, and one without contracts.
type candidateRepo struct {
	dir                                  string
	st                                   *gitstore.Store
	accepted, rejected, bare, noContract string
	tagObject                            string
}

const twoRows = "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\nE2. two\n"

func examineAt(t *testing.T, x *examine.Examiner, feature, commit string, verdicts ...examine.Verdict) {
	t.Helper()
	ctx := context.Background()
	tg := examine.Target{Feature: feature, Candidate: commit}
	if _, err := x.Open(ctx, tg, false); refusal.Named(err, "CandidateMoved") {
		// The feature's draft examines another commit: move it here.
		if _, err := x.Retarget(ctx, tg); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	res, err := x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("seen"))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range verdicts {
		in := examine.VerdictInput{Expectation: examine.ExpectationID("E" + string(rune('1'+i))), Verdict: v}
		switch v {
		case examine.Met:
			in.Observations = []examine.ObservationID{examine.ObservationID(res.Message)}
		case examine.Unmet:
			in.Observations, in.Class = []examine.ObservationID{examine.ObservationID(res.Message)}, "product_violation"
		case examine.NotExamined:
			in.Reason = "no time"
		}
		if _, err := x.SetVerdict(ctx, tg, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := x.Close(ctx, tg, "accepted", "judged"); err != nil && !strings.Contains(err.Error(), "brief") {
		t.Fatal(err)
	}
}

func newCandidateRepo(t *testing.T) *candidateRepo {
	t.Helper()
	r := &candidateRepo{dir: gittest.Init(t, false)}
	r.noContract = gittest.Git(t, r.dir, "rev-parse", "HEAD")
	gittest.WriteFile(t, r.dir, ".nwave/features/greet.md", twoRows)
	gittest.WriteFile(t, r.dir, ".nwave/features/login.md", twoRows)
	gittest.WriteFile(t, r.dir, ".nwave/README", "not a contract, and not among them")
	gittest.Git(t, r.dir, "add", "-A")
	gittest.Git(t, r.dir, "commit", "-q", "-m", "contracts")
	r.accepted = gittest.Git(t, r.dir, "rev-parse", "HEAD")
	gittest.Git(t, r.dir, "commit", "-q", "--allow-empty", "-m", "second")
	r.rejected = gittest.Git(t, r.dir, "rev-parse", "HEAD")
	gittest.Git(t, r.dir, "commit", "-q", "--allow-empty", "-m", "third")
	r.bare = gittest.Git(t, r.dir, "rev-parse", "HEAD")
	gittest.Git(t, r.dir, "tag", "-a", "-m", "v1", "v1", r.accepted)
	r.tagObject = gittest.Git(t, r.dir, "rev-parse", "v1")
	loc, err := gitrepo.Discover(r.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.st, err = gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	x := &examine.Examiner{Store: r.st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	examineAt(t, x, "greet", r.accepted, examine.Met, examine.Met)
	examineAt(t, x, "login", r.accepted, examine.Met, examine.Met)
	examineAt(t, x, "greet", r.rejected, examine.Met, examine.Unmet)
	examineAt(t, x, "login", r.rejected, examine.Met, examine.NotExamined)
	examineAt(t, x, "greet", r.bare, examine.Met, examine.Met)
	return r
}

func (r *candidateRepo) open() (*gitstore.Store, error) { return r.st, nil }

func update(local, oid, remote string) hooks.Update {
	return hooks.Update{LocalRef: local, LocalOID: oid, RemoteRef: remote, RemoteOID: z40}
}

func TestAProtectedRefMovesOnlyToACommitAcceptedForEveryFeature(t *testing.T) {
	r := newCandidateRepo(t)
	p := hooks.Policy{Protect: hooks.DefaultProtect}
	cases := []struct {
		name    string
		u       hooks.Update
		verdict hooks.Verdict
		outcome map[string]examine.Outcome
	}{
		{"accepted", update("refs/heads/main", r.accepted, "refs/heads/main"), hooks.Accepted,
			map[string]examine.Outcome{"greet": examine.Accepted, "login": examine.Accepted}},
		{"rejected and indeterminate", update("HEAD~1", r.rejected, "refs/heads/main"), hooks.Refused,
			map[string]examine.Outcome{"greet": examine.Rejected, "login": examine.Indeterminate}},
		{"a feature not examined", update("HEAD", r.bare, "refs/heads/master"), hooks.Refused,
			map[string]examine.Outcome{"greet": examine.Accepted, "login": examine.None}},
		{"no contract at all", update("HEAD~3", r.noContract, "refs/heads/main"), hooks.Pass, nil},
		{"an annotated tag is peeled", update("v1", r.tagObject, "refs/heads/main"), hooks.Accepted,
			map[string]examine.Outcome{"greet": examine.Accepted, "login": examine.Accepted}},
		{"not protected", update("HEAD", r.bare, "refs/heads/topic"), hooks.Pass, nil},
		{"a deletion", hooks.Update{LocalRef: "(delete)", LocalOID: z40, RemoteRef: "refs/heads/main", RemoteOID: r.bare}, hooks.Pass, nil},
		{"nwdes's own ref", update("refs/nwdes/examine", r.bare, "refs/nwdes/examine"), hooks.Pass, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := hooks.Check(r.open, p, []hooks.Update{c.u})
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Refs[0]
			if got.Verdict != c.verdict || rep.OK() != (c.verdict != hooks.Refused) {
				t.Fatalf("verdict %s (%s), want %s", got.Verdict, got.Why, c.verdict)
			}
			for _, f := range got.Features {
				if c.outcome[f.Feature] != f.Outcome {
					t.Fatalf("%s: %s, want %s", f.Feature, f.Outcome, c.outcome[f.Feature])
				}
			}
			if len(got.Features) != len(c.outcome) {
				t.Fatalf("features %+v", got.Features)
			}
		})
	}
}

func TestARefusalNamesTheCommitEachFeatureAndTheRemedy(t *testing.T) {
	r := newCandidateRepo(t)
	rep, err := hooks.Check(r.open, hooks.Policy{Protect: hooks.DefaultProtect}, []hooks.Update{update("HEAD", r.bare, "refs/heads/main")})
	if err != nil {
		t.Fatal(err)
	}
	msg := hooks.Explain(rep.Refs[0])
	for _, want := range []string{
		"push to refs/heads/main refused: commit " + r.bare + " is not accepted",
		"\n  greet: accepted\n", "\n  login: not examined\n",
		"remedy: examine login at this commit", "git nwdes examine open --feature login --candidate " + r.bare[:12],
		"amend or rebase", "--no-verify",
	} {
		if !strings.Contains(msg, want) {
			t.Fatalf("refusal lacks %q:\n%s", want, msg)
		}
	}
	rep, _ = hooks.Check(r.open, hooks.Policy{Protect: hooks.DefaultProtect}, []hooks.Update{update("HEAD", r.rejected, "refs/heads/main")})
	if msg := hooks.Explain(rep.Refs[0]); !strings.Contains(msg, "  greet: rejected (published/") {
		t.Fatalf("a rejected feature is named with its record:\n%s", msg)
	}
}

func TestTheStoreIsNotOpenedWhenNothingNeedsChecking(t *testing.T) {
	open := func() (*gitstore.Store, error) { return nil, errors.New("opened") }
	p := hooks.Policy{Protect: hooks.DefaultProtect}
	us := []hooks.Update{
		{LocalRef: "(delete)", LocalOID: z64, RemoteRef: "refs/heads/main", RemoteOID: strings.Repeat("c", 64)},
		update("HEAD", a40, "refs/heads/topic"),
		update("refs/notes/nwdes", a40, "refs/notes/nwdes"),
	}
	if hooks.NeedsStore(p, us) {
		t.Fatal("NeedsStore")
	}
	rep, err := hooks.Check(open, p, us)
	if err != nil || !rep.OK() {
		t.Fatalf("%+v %v", rep, err)
	}
}

func TestAnUnreadableStoreFailsClosed(t *testing.T) {
	r := newCandidateRepo(t)
	p := hooks.Policy{Protect: hooks.DefaultProtect}
	u := []hooks.Update{update("HEAD", r.accepted, "refs/heads/main")}
	_, err := hooks.Check(func() (*gitstore.Store, error) { return nil, errors.New("disk on fire") }, p, u)
	if !refusal.Named(err, "StoreUnreadable") || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("open failure: %v", err)
	}
	missing := oid.MustParse(strings.Repeat("e", 40))
	ref := filepath.Join(r.st.Location().CommonDir, "refs", "nwdes", "examine")
	if err := os.WriteFile(ref, []byte(missing.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = hooks.Check(r.open, p, u)
	if !refusal.Named(err, "StoreUnreadable") {
		t.Fatalf("a ref naming a missing commit: %v", err)
	}
	if err := os.WriteFile(ref, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = hooks.Check(r.open, p, u)
	if !refusal.Named(err, "StoreUnreadable") {
		t.Fatalf("a malformed ref: %v", err)
	}
}

func FuzzParseUpdates(f *testing.F) {
	f.Add("refs/heads/main " + a40 + " refs/heads/main " + z40 + "\n")
	f.Add("(delete) " + z64 + " refs/heads/x " + z64 + "\n\n")
	f.Add(":/a b " + a40 + " refs/tags/v " + a40)
	f.Fuzz(func(t *testing.T, s string) {
		us, err := hooks.ParseUpdates(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, u := range us {
			if len(u.LocalOID) != len(u.RemoteOID) || !strings.HasPrefix(u.RemoteRef, "refs/") || u.LocalRef == "" {
				t.Fatalf("accepted a malformed update %+v", u)
			}
		}
	})
}
