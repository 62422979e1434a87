package examine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// closeAccepted judges every expectation met and closes.
func closeAccepted(t *testing.T, x *examine.Examiner, tgt examine.Target, ids ...examine.ExpectationID) *examine.Examination {
	t.Helper()
	must := okFor(t)
	ctx := context.Background()
	must(x.Open(ctx, tgt, false))
	must(x.AddObservation(ctx, tgt, examine.SourceExaminer, []byte("seen")))
	for _, id := range ids {
		must(x.SetVerdict(ctx, tgt, examine.VerdictInput{Expectation: id, Verdict: examine.Met, Observations: []examine.ObservationID{"O1"}}))
	}
	ex, _, err := x.Close(ctx, tgt, "accepted", "d")
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func standing(t *testing.T, x *examine.Examiner, commit string) examine.Standing {
	t.Helper()
	r, err := examine.NewReader(x.Store)
	if err != nil {
		t.Fatal(err)
	}
	sd, err := r.Standing(oid.MustParse(commit), "f")
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

func TestAnAcceptedExaminationOfTheCommittedContractStands(t *testing.T) {
	x := memSetup(t, threeRows)
	ex := closeAccepted(t, x, tg, "E1", "E2", "E3")
	if sd := standing(t, x, ex.Candidate); sd.Outcome != examine.Accepted || sd.Problem != "" {
		t.Fatalf("standing = %+v", sd)
	}
}

func TestAnExaminationOfAnotherContractDoesNotStand(t *testing.T) {
	dir, x := setup(t, threeRows)
	gittest.WriteFile(t, dir, "docs/trivial.md", "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. trivially true\n")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "a trivial contract beside the real one")
	ex := closeAccepted(t, x, examine.Target{Feature: "f", Contract: "docs/trivial.md"}, "E1")
	sd := standing(t, x, ex.Candidate)
	if sd.Outcome != examine.Invalid || !strings.Contains(sd.Problem, "judged the contract at docs/trivial.md") {
		t.Fatalf("standing = %+v, want invalid naming the other contract", sd)
	}
}

func TestARecordWhoseOutcomeItsRowsDoNotDeriveDoesNotStandAndFsckNamesIt(t *testing.T) {
	_, x := setup(t, threeRows)
	ex := closeAccepted(t, x, tg, "E1", "E2", "E3")
	rewriteTip(t, x.Store.(*gitstore.Store), func(files map[string][]byte) {
		b := editBody(t, files, ex.Path+"/record.json", func(body map[string]any) {
			rows := body["rows"].([]any)
			row := rows[0].(map[string]any)
			row["verdict"], row["class"] = "unmet", "unstable"
		})
		// Named as its new content names it, so that only the outcome
		// gives it away (a record edited in place is refused by its name).
		sum := sha256.Sum256(b)
		renamed := ex.Path[:strings.LastIndexByte(ex.Path, '-')+1] + hex.EncodeToString(sum[:6])
		moveRecord(files, ex.Path, renamed)
		idx := "features/f/record.json"
		files[idx] = []byte(strings.Replace(string(files[idx]), ex.Path, renamed, 1))
		ex.Path = renamed
	})
	sd := standing(t, x, ex.Candidate)
	if sd.Outcome != examine.Invalid || !strings.Contains(sd.Problem, "stored outcome is accepted, but its rows derive rejected") {
		t.Fatalf("standing = %+v", sd)
	}
	loc := x.Store.(*gitstore.Store).Location()
	st, _ := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	rep, err := st.Fsck()
	if err != nil || rep.OK() || !strings.Contains(fmt.Sprint(rep.Problems), "rows derive rejected") {
		t.Fatalf("fsck: %+v, %v", rep, err)
	}
}

func TestContractsThatCannotBeEnforcedAreRefusedNotSkipped(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string){
		"an invalid feature name": func(t *testing.T, dir string) { gittest.WriteFile(t, dir, ".nwave/features/bad name.md", "x") },
		"a directory":             func(t *testing.T, dir string) { gittest.WriteFile(t, dir, ".nwave/features/team/pay.md", "x") },
		"a look-alike upper-case extension": func(t *testing.T, dir string) {
			gittest.WriteFile(t, dir, ".nwave/features/pay.MD", threeRows)
		},
		"a look-alike second extension": func(t *testing.T, dir string) {
			gittest.WriteFile(t, dir, ".nwave/features/pay.md.txt", threeRows)
		},
		"a look-alike directory": func(t *testing.T, dir string) {
			gittest.WriteFile(t, dir, ".nwave/Features/pay.md", threeRows)
		},
		"a contract that is a symbolic link": func(t *testing.T, dir string) {
			gittest.WriteFile(t, dir, "real.md", threeRows)
			if err := os.Symlink("../../real.md", filepath.Join(dir, ".nwave", "features", "pay.md")); err != nil {
				t.Fatal(err)
			}
		},
		"a symbolic link": func(t *testing.T, dir string) {
			gittest.WriteFile(t, dir, "real/f.md", threeRows)
			if err := os.RemoveAll(filepath.Join(dir, ".nwave", "features")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../real", filepath.Join(dir, ".nwave", "features")); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir, x := setup(t, threeRows)
			mk(t, dir)
			gittest.Git(t, dir, "add", "-A")
			gittest.Git(t, dir, "commit", "-q", "-m", "odd contract layout")
			head, _ := x.Store.Resolve("HEAD")
			if _, err := examine.Features(x.Store, head); !refusal.Named(err, "ConfigurationMalformed") {
				t.Fatalf("Features = %v, want ConfigurationMalformed", err)
			}
			// One reader for every verb: what status refuses, gate run and
			// the examination refuse too.
			if _, err := examine.Load(x.Store, examine.Target{Feature: "f"}); !refusal.Named(err, "ConfigurationMalformed") {
				t.Fatalf("Load = %v, want ConfigurationMalformed", err)
			}
		})
	}
}

func TestALaterCloseIsNewestEvenWhenTheClockWentBack(t *testing.T) {
	x := memSetup(t, "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n")
	must := okFor(t)
	ctx := context.Background()
	first := closeAccepted(t, x, tg, "E1")
	x.Now = func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E1", Verdict: examine.Unmet, Class: "unstable", Observations: []examine.ObservationID{"O1"}}))
	second, _, err := x.Close(ctx, tg, "accepted", "flaky after all")
	if err != nil {
		t.Fatal(err)
	}
	if second.ClosedAt <= first.ClosedAt {
		t.Fatalf("second close stamped %s, not after %s", second.ClosedAt, first.ClosedAt)
	}
	if sd := standing(t, x, first.Candidate); sd.Outcome != examine.Rejected {
		t.Fatalf("standing = %s, want the later rejection", sd.Outcome)
	}
}
