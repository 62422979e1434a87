package examine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// workerSetup is memSetup with the contract committed by author.
func workerSetup(t *testing.T, author string) (*examine.Examiner, oid.ID) {
	t.Helper()
	st, err := memstore.New(memstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.AddCommit(memstore.Commit{Files: map[string][]byte{".nwave/features/f.md": []byte(threeRows)}, Author: author, Message: "contract"})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	return &examine.Examiner{Store: st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}, c
}

func TestAWorkersExaminationNamesItAndItsBriefSaysSo(t *testing.T) {
	x, c := workerSetup(t, "A Person <person@example.com>")
	x.By = &examine.ExaminedBy{Worker: "checker", Identity: "nwdes worker checker <checker@nwdes.invalid>", Job: "exam/1-0123456789abcdef"}
	ex := closeAccepted(t, x, tg, "E1", "E2", "E3")
	r, err := examine.NewReader(x.Store)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.At(c, "f")
	if err != nil || got.By == nil || *got.By != *x.By {
		t.Fatalf("read back examiner %+v, %v; want %+v", got, err, x.By)
	}
	if b := examine.RenderBrief(ex); !strings.Contains(b, "- examiner: swarm worker checker (nwdes worker checker <checker@nwdes.invalid>), job exam/1-0123456789abcdef\n") {
		t.Fatalf("brief does not name the examiner:\n%s", b)
	}
	h, err := r.Holds(c, "f", examine.Rules{})
	if err != nil || h.Outcome != examine.Accepted {
		t.Fatalf("holds = %+v, %v; want accepted", h, err)
	}
}

func TestAWorkersExaminationOfItsOwnCommitDoesNotHoldWithOrWithoutAPolicy(t *testing.T) {
	x, c := workerSetup(t, "nwdes worker maker <Maker@nwdes.invalid>")
	x.By = &examine.ExaminedBy{Worker: "maker", Identity: "nwdes worker maker <maker@nwdes.invalid>", Job: "exam/1-0123456789abcdef"}
	closeAccepted(t, x, tg, "E1", "E2", "E3")
	r, err := examine.NewReader(x.Store)
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Holds(c, "f", examine.Rules{})
	if err != nil || h.Outcome != examine.Invalid || h.Refusal != refusal.DutyNotSeparated || !strings.Contains(h.Problem, "nobody certifies their own work") {
		t.Fatalf("holds = %+v, %v; want DutyNotSeparated", h, err)
	}
}

func TestOwnWorkNamesTheWorkerThatProducedTheCandidate(t *testing.T) {
	x, c := workerSetup(t, "A Person <person@example.com>")
	producers := []examine.ExaminedBy{{Worker: "maker", Identity: "nwdes worker maker <maker@nwdes.invalid>", Job: "make/1-0123456789abcdef"}}
	cases := map[string]struct {
		by   *examine.ExaminedBy
		want string
	}{
		"the producer by name":         {&examine.ExaminedBy{Worker: "maker"}, "which produced the candidate"},
		"the producer by identity":     {&examine.ExaminedBy{Worker: "renamed", Identity: "x <maker@nwdes.invalid>"}, "which produced the candidate"},
		"the commit's author":          {&examine.ExaminedBy{Worker: "p", Identity: "P <PERSON@example.com>"}, "author or committer"},
		"another worker":               {&examine.ExaminedBy{Worker: "other", Identity: "o <other@nwdes.invalid>"}, ""},
		"a worker without identity":    {&examine.ExaminedBy{Worker: "other"}, ""},
		"no examiner named (a person)": {nil, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := examine.OwnWork(x.Store, c, "f", tc.by, nil, producers)
			if err != nil {
				t.Fatal(err)
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("OwnWork = %q, want %q", got, tc.want)
			}
		})
	}
}
