package cli

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
)

// Two clones of one repository examine the same features at the same
// commit in any interleaving of adds, sets, removes, verdicts, closes and
// syncs (push and fetch, in either order). Whatever the interleaving:
// no published examination and no cited text is lost, both clones end
// with the same published records, a sync never changes what an O ID a
// clone printed denotes, and fsck stays clean in both.
func TestAnyInterleavingOfTwoClonesLosesNothing(t *testing.T) {
	seeds := []int64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { mergeProperty(t, seed) })
	}
}

type clone struct {
	name string
	dir  string
	// texts is what each O ID of each feature denotes in this clone, as
	// printed when it was issued (or set).
	texts map[string]map[string]string
}

func mergeProperty(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "home"), 0o755)
	remote := filepath.Join(root, "remote.git")
	gittest.Git(t, root, "init", "-q", "--bare", "-b", "main", remote)
	seedDir := filepath.Join(root, "seed")
	gittest.Git(t, root, "init", "-q", "-b", "main", seedDir)
	for _, f := range []string{"f", "g"} {
		gittest.WriteFile(t, seedDir, ".nwave/features/"+f+".md", "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\nE2. two\n")
	}
	gittest.Git(t, seedDir, "add", "-A")
	gittest.Git(t, seedDir, "commit", "-q", "-m", "candidate")
	gittest.Git(t, seedDir, "push", "-q", remote, "main")
	var clones []*clone
	for _, n := range []string{"a", "b"} {
		dir := filepath.Join(root, n)
		gittest.Git(t, root, "clone", "-q", remote, dir)
		clones = append(clones, &clone{name: n, dir: dir, texts: map[string]map[string]string{"f": {}, "g": {}}})
	}
	must := func(c *clone, args ...string) hostileRun {
		t.Helper()
		r := runIn(t, c.dir, "", args...)
		if r.code != 0 && !(args[0] == "examine" && args[1] == "close" && r.code == 1) {
			t.Fatalf("%s: %v: exit %d\n%s%s", c.name, args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	published := map[string]bool{} // every examination record either clone published
	for _, c := range clones {
		for _, f := range []string{"f", "g"} {
			must(c, "examine", "open", "--feature", f)
		}
	}
	for step := 0; step < 40; step++ {
		c := clones[rng.Intn(2)]
		f := []string{"f", "g"}[rng.Intn(2)]
		ids := sortedKeys(c.texts[f])
		switch op := rng.Intn(7); {
		case op <= 1:
			text := fmt.Sprintf("%s saw %d", c.name, step)
			r := must(c, "examine", "observation", "add", "--feature", f, "--text", text)
			c.texts[f][strings.TrimSpace(r.stdout)] = text
		case op == 2 && len(ids) > 0:
			id := ids[rng.Intn(len(ids))]
			text := fmt.Sprintf("%s corrected %d", c.name, step)
			must(c, "examine", "observation", "set", "--feature", f, "--id", id, "--text", text)
			c.texts[f][id] = text
		case op == 3 && len(ids) > 1:
			id := ids[rng.Intn(len(ids))]
			must(c, "examine", "observation", "remove", "--feature", f, "--id", id)
			delete(c.texts[f], id)
		case op == 4 && len(ids) > 0:
			for _, e := range []string{"E1", "E2"} {
				must(c, "examine", "verdict", "set", "--feature", f, "--expectation", e, "--verdict", "met", "--observation", ids[rng.Intn(len(ids))])
			}
			r := must(c, "examine", "close", "--feature", f, "--outcome", "accepted", "--diagnostic", fmt.Sprintf("%s closes at %d", c.name, step))
			_ = r
			for _, p := range publishedPaths(t, c) {
				published[p] = true
			}
		case op >= 5:
			before := draftTexts(t, c)
			if rng.Intn(2) == 0 {
				must(c, "push", "origin")
			} else {
				must(c, "fetch", "origin")
			}
			if after := draftTexts(t, c); after != before {
				t.Fatalf("step %d: a sync changed what %s's observation IDs denote:\nbefore %s\nafter  %s", step, c.name, before, after)
			}
		}
		checkIDs(t, c)
	}
	// Everyone meets: a pushes, b fetches and pushes, a fetches.
	must(clones[0], "push", "origin")
	must(clones[1], "fetch", "origin")
	must(clones[1], "push", "origin")
	must(clones[0], "fetch", "origin")
	pa, pb := publishedPaths(t, clones[0]), publishedPaths(t, clones[1])
	if strings.Join(pa, "\n") != strings.Join(pb, "\n") {
		t.Fatalf("the clones hold different examinations:\na %v\nb %v", pa, pb)
	}
	for p := range published {
		if !contains(pa, p) {
			t.Fatalf("examination %s was lost", p)
		}
	}
	for _, c := range clones {
		checkIDs(t, c)
		if r := runIn(t, c.dir, "", "fsck"); r.code != 0 {
			t.Fatalf("fsck in %s after the merges:\n%s%s", c.name, r.stdout, r.stderr)
		}
		// Every cited text of every examination reads back.
		for _, f := range []string{"f", "g"} {
			if r := runIn(t, c.dir, "", "examine", "show", "--feature", f, "--json"); r.code != 0 {
				t.Fatalf("show %s in %s: %s", f, c.name, r.stderr)
			}
		}
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// publishedPaths lists the examination records a clone holds.
func publishedPaths(t *testing.T, c *clone) []string {
	t.Helper()
	out, err := gittest.Run(c.dir, "ls-tree", "-r", "--name-only", "refs/nwdes/examine")
	if err != nil {
		return nil
	}
	var paths []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "published/") && strings.HasSuffix(l, "/record.json") {
			paths = append(paths, l)
		}
	}
	sort.Strings(paths)
	return paths
}

// draftTexts renders what each of a clone's drafts holds, ID by ID.
func draftTexts(t *testing.T, c *clone) string {
	t.Helper()
	var b strings.Builder
	for _, f := range []string{"f", "g"} {
		r := runIn(t, c.dir, "", "examine", "show", "--feature", f, "--json")
		var show struct {
			Draft json.RawMessage `json:"draft"`
		}
		json.Unmarshal([]byte(r.stdout), &show)
		b.WriteString(f + ":" + string(show.Draft) + "\n")
	}
	return b.String()
}

// checkIDs asserts that every O ID the clone printed still denotes the
// text it printed it for.
func checkIDs(t *testing.T, c *clone) {
	t.Helper()
	for _, f := range []string{"f", "g"} {
		r := runIn(t, c.dir, "", "examine", "show", "--feature", f, "--json")
		var show struct {
			Draft *struct {
				Observations []struct {
					ID   string `json:"id"`
					Text string `json:"text"`
				} `json:"observations"`
			} `json:"draft"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &show); err != nil || show.Draft == nil {
			t.Fatalf("show %s in %s: %v\n%s", f, c.name, err, r.stdout)
		}
		got := map[string]string{}
		for _, o := range show.Draft.Observations {
			got[o.ID] = o.Text
		}
		for id, want := range c.texts[f] {
			if got[id] != want {
				t.Fatalf("in %s, %s %s denotes %q, printed for %q", c.name, f, id, got[id], want)
			}
		}
	}
}
