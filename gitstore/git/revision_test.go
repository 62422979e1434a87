package git_test

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// revRepo is a small repository with every kind of name Resolve reads:
// a merge, annotated, lightweight and nested tags, tags of a tree and a
// blob, a branch and a tag of the same name, remote-tracking refs with a
// symbolic origin/HEAD, packed refs (one overridden by a loose file),
// symbolic ref chains, broken and dangling refs, pseudorefs, and objects
// whose ids share their first four hex digits, some packed, some loose.
type revRepo struct {
	dir string
	st  *git.Repo
	// ids of the fixture by role, for building revisions.
	c1, c2, merge, c3, s1 string
	v1tag                 string // the annotated tag object v1
	blobPair              [2]string
	commitBlob            [2]string // a commit and a blob sharing a prefix
	tagBlob               [2]string // a tag of a commit and a blob sharing a prefix
	commitPair            [2]string
}

// gitIn runs git in dir with the pinned environment and returns stdout.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gittest.Git(t, dir, args...)
}

// hashObject computes a git object id the way git does.
func hashObject(typ string, data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// writeObject stores data as a loose object of typ with git itself and
// checks that git computed the id expected.
func writeObject(t testing.TB, dir, typ string, data []byte, want string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "object")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, dir, "hash-object", "--no-filters", "-t", typ, "-w", f); got != want {
		t.Fatalf("git hash-object = %s, computed %s", got, want)
	}
}

// collide finds content (from gen) whose id as typ shares its first four hex
// digits with target, or, with target empty, two contents whose ids share
// them with each other. It returns the contents and their ids.
func collide(typ, target string, gen func(i int) []byte) (datas [2][]byte, ids [2]string) {
	seen := map[string]int{}
	for i := 0; ; i++ {
		d := gen(i)
		id := hashObject(typ, d)
		if target != "" {
			if id[:4] == target[:4] && id != target {
				return [2][]byte{nil, d}, [2]string{target, id}
			}
			continue
		}
		if j, ok := seen[id[:4]]; ok {
			return [2][]byte{gen(j), d}, [2]string{hashObject(typ, gen(j)), id}
		}
		seen[id[:4]] = i
	}
}

func newRevRepo(t testing.TB) *revRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := gittest.Init(t, false)
	r := &revRepo{dir: dir}
	g := func(args ...string) string { return gitIn(t, dir, args...) }
	commit := func(file, msg string) string {
		gittest.WriteFile(t, dir, file, msg+"\n")
		g("add", "-A")
		g("commit", "-q", "-m", msg)
		return g("rev-parse", "HEAD")
	}
	r.c1 = g("rev-parse", "HEAD")
	r.c2 = commit("two", "second")
	g("checkout", "-q", "-b", "side", r.c1)
	r.s1 = commit("side", "on the side")
	g("checkout", "-q", "main")
	g("merge", "-q", "--no-ff", "-m", "merge side", "side")
	r.merge = g("rev-parse", "HEAD")
	r.c3 = commit("three", "third")

	g("tag", "-a", "-m", "release one", "v1", r.merge)
	r.v1tag = g("rev-parse", "v1")
	g("tag", "lw", r.c2)
	g("tag", "-a", "-m", "a tag of a tag", "tagtag", "v1")
	g("tag", "-a", "-m", "a tree", "treetag", r.c3+"^{tree}")
	g("tag", "blobtag", r.c1+":README")
	g("tag", "-a", "-m", "a blob", "ablobtag", r.c1+":README")
	g("branch", "dup", r.c1)
	g("tag", "dup", r.c2) // refs/tags/dup comes before refs/heads/dup
	g("branch", "feature/x", r.s1)
	g("branch", "overridden", r.c1)
	g("branch", r.c1[:6], r.c3) // a branch named like an abbreviated id
	g("update-ref", "refs/remotes/origin/main", r.merge)
	g("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	g("update-ref", "refs/remotes/upstream/HEAD", r.c2) // not symbolic
	g("update-ref", "refs/nwdes/examine", r.s1)
	g("pack-refs", "--all")
	g("update-ref", "refs/heads/overridden", r.c2) // loose over packed
	g("branch", "loose", r.c2)

	// Chains of symbolic refs: four hops resolve (five files read, git's
	// limit), five do not.
	g("symbolic-ref", "refs/heads/ch4", "refs/heads/main")
	for i := 3; i >= 0; i-- {
		g("symbolic-ref", fmt.Sprintf("refs/heads/ch%d", i), fmt.Sprintf("refs/heads/ch%d", i+1))
	}
	g("symbolic-ref", "refs/heads/dangling", "refs/heads/nowhere")

	// Everything so far is packed; what follows stays loose.
	g("repack", "-q", "-a", "-d")

	tree := g("rev-parse", r.c1+"^{tree}")
	blob := func(i int) []byte { return fmt.Appendf(nil, "collision %d\n", i) }
	datas, ids := collide("blob", "", blob)
	writeObject(t, dir, "blob", datas[0], ids[0])
	writeObject(t, dir, "blob", datas[1], ids[1])
	r.blobPair = ids
	datas, ids = collide("blob", r.c2, blob)
	writeObject(t, dir, "blob", datas[1], ids[1])
	r.commitBlob = ids
	datas, ids = collide("blob", r.v1tag, blob)
	writeObject(t, dir, "blob", datas[1], ids[1])
	r.tagBlob = ids
	datas, ids = collide("commit", "", func(i int) []byte {
		return fmt.Appendf(nil, "tree %s\nauthor Tester <tester@example.com> 1767225600 +0000\ncommitter Tester <tester@example.com> 1767225600 +0000\n\ncolliding %d\n", tree, i)
	})
	writeObject(t, dir, "commit", datas[0], ids[0])
	writeObject(t, dir, "commit", datas[1], ids[1])
	r.commitPair = ids

	// Refs git skips: a file that holds no id, a tag of that kind shadowing
	// a good branch, files in the git directory that are not refs.
	gitDir := filepath.Join(dir, ".git")
	gittest.WriteFile(t, gitDir, "refs/heads/broken", "garbage\n")
	gittest.WriteFile(t, gitDir, "refs/tags/shadow", "not an id\n")
	g("update-ref", "refs/heads/shadow", r.s1)
	gittest.WriteFile(t, gitDir, "FETCH_HEAD", r.c2+"\t\tbranch 'main' of /elsewhere\n"+r.c1+"\tnot-for-merge\tbranch 'side' of /elsewhere\n")
	gittest.WriteFile(t, gitDir, "ORIG_HEAD", strings.ToUpper(r.s1)+"\n")

	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.st, err = git.Open(loc, git.Options{}); err != nil {
		t.Fatal(err)
	}
	return r
}

// revisions are the revisions checked against git, built from the ids.
func (r *revRepo) revisions() []string {
	revs := []string{
		"", "HEAD", "@", "HEAD~", "HEAD~0", "HEAD~1", "HEAD~2", "HEAD~3", "HEAD~4",
		"HEAD^", "HEAD^0", "HEAD^1", "HEAD^2", "HEAD^^", "HEAD^^2", "HEAD^^3", "HEAD~1^2", "HEAD^2~1",
		"HEAD^007", "@~2", "@^", "@^{commit}", "HEAD^{}", "HEAD^{commit}~1", "HEAD^{}~1",
		"HEAD^{commit}^{commit}", "HEAD^{tag}", "HEAD^{object}", "HEAD^{tree}", "HEAD^{blob}",
		"HEAD^{foo}", "HEAD^{", "HEAD^{commit", "HEAD}", "HEAD~99", "HEAD~2147483647",
		"HEAD~2147483648", "HEAD~99999999999999999999", "HEAD^2^2", "HEAD~~", "HEAD^^^^",
		"main", "main~1", "heads/main", "refs/heads/main", "side", "tags/v1", "v1", "v1^{}",
		"v1^{tag}", "v1^{object}", "v1~1", "v1^0", "v1^2", "refs/tags/v1", "lw", "tagtag",
		"tagtag^{tag}", "tagtag^{}", "treetag", "treetag^{}", "blobtag", "ablobtag", "ablobtag^{}",
		"dup", "heads/dup", "tags/dup", "refs/heads/dup", "origin", "origin/main", "origin/HEAD",
		"remotes/origin/main", "refs/remotes/origin/HEAD", "upstream", "overridden", "loose",
		"feature/x", "feature", "nwdes/examine", "refs/nwdes/examine", "ch0", "ch1", "ch4",
		"refs/heads/ch1", "dangling", "broken", "shadow", "FETCH_HEAD", "ORIG_HEAD",
		"MERGE_HEAD", "nope", "refs/heads/nope", "config", "description", "index", "objects",
		"logs/HEAD", "refs", "refs/heads", "heads", "main-worktree/HEAD", "refs/heads/main.lock",
		"main/", "/main", "ma..in", ".main", "main.", "ma in", "ma\tin", "@@", "@main", "main@",
		"~", "^", "~1", "^0", "-", "--", "-g1234", "HEAD^{commit}}", "HEAD^{commit}x}",
		// Refused: syntax nwdes does not resolve.
		"HEAD:README", ":README", ":/initial", "HEAD@{0}", "@{-1}", "main@{upstream}", "main..HEAD",
		"main...HEAD", "^HEAD", "HEAD^{/initial}", "HEAD^!", "HEAD^@", "HEAD^-", "HEAD^-1",
	}
	for _, id := range []string{r.c1, r.c2, r.merge, r.c3, r.s1, r.v1tag} {
		revs = append(revs, id, strings.ToUpper(id), id[:4], id[:7], id[:12], strings.ToUpper(id[:9]),
			id[:39], id[:3], id+"~1", id[:8]+"^0", id[:8]+"^{}", "v1-3-g"+id[:7], "x-g"+id[:12], "v1-g"+id[:3])
	}
	for _, pair := range [][2]string{r.blobPair, r.commitBlob, r.tagBlob, r.commitPair} {
		for _, id := range pair {
			revs = append(revs, id, id[:5], id[:5]+"^{}", "x-g"+id[:5])
		}
		p := pair[0][:4]
		revs = append(revs, p, strings.ToUpper(p), p+"^{}", p+"^{object}", p+"^{tag}", p+"~0",
			p+"^0", p+"^{commit}", p+"^{}^{commit}", "d-g"+p, "d-g"+p+"~0")
	}
	revs = append(revs, "0000", "ffff", strings.Repeat("0", 40), strings.Repeat("1", 40), r.c1[:6], r.c1[:6]+"~1")
	return revs
}

// gitRevParse is the oracle: what git rev-parse --verify REV^{commit} prints,
// ok only when it prints exactly one object id.
func gitRevParse(dir, rev string) (string, bool) {
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", "--end-of-options", rev+"^{commit}")
	cmd.Dir = dir
	cmd.Env = gittest.Env(filepath.Dir(dir))
	out, err := cmd.Output()
	s := strings.TrimSuffix(string(out), "\n")
	if err != nil || len(s) != 40 || strings.Contains(s, "\n") {
		return "", false
	}
	return s, true
}

// refusedThoughGitAccepts lists revisions git resolves that Resolve refuses
// on purpose, with why.
var refusedThoughGitAccepts = map[string]string{
	// git stops reading the type at "}" and ignores what follows it.
	"HEAD^{commit}}":  "garbage after ^{commit}",
	"HEAD^{commit}x}": "garbage after ^{commit}",
}

func TestResolveAgreesWithGit(t *testing.T) {
	t.Parallel()
	r := newRevRepo(t)
	var accepted, refused int
	for _, rev := range r.revisions() {
		got, err := r.st.Resolve(rev)
		want, ok := gitRevParse(r.dir, rev)
		if rev == "" {
			want, ok = gitRevParse(r.dir, "HEAD")
		}
		switch {
		case refusedThoughGitAccepts[rev] != "" || gitstoreRefusesSyntax(rev):
			if err == nil || !refusal.Named(err, "MissingFact") {
				t.Errorf("Resolve(%q) = %s, %v; want a MissingFact refusal", rev, got, err)
			}
		case ok && err != nil:
			t.Errorf("Resolve(%q): %v; git says %s", rev, err, want)
		case ok && got.String() != want:
			t.Errorf("Resolve(%q) = %s, git says %s", rev, got, want)
		case !ok && err == nil:
			t.Errorf("Resolve(%q) = %s, git refuses it", rev, got)
		case !ok && !refusal.Named(err, "MissingFact"):
			t.Errorf("Resolve(%q): %v; want a MissingFact refusal", rev, err)
		}
		if err == nil {
			accepted++
		} else {
			refused++
		}
	}
	t.Logf("%d revisions resolved, %d refused, all as git does", accepted, refused)
	if accepted < 100 || refused < 100 {
		t.Fatalf("fixture too weak: %d resolved, %d refused", accepted, refused)
	}
}

// gitstoreRefusesSyntax mirrors the syntax Resolve refuses before looking.
func gitstoreRefusesSyntax(rev string) bool {
	return strings.HasPrefix(rev, "^") || strings.Contains(rev, "..") || strings.Contains(rev, "@{") ||
		strings.Contains(rev, ":") || strings.Contains(rev, "^{/") || strings.HasSuffix(rev, "^!") ||
		strings.HasSuffix(rev, "^@") || strings.Contains(rev, "^-")
}

func TestResolveRefusalsSayWhy(t *testing.T) {
	t.Parallel()
	r := newRevRepo(t)
	lo, hi := r.blobPair[0], r.blobPair[1]
	if lo > hi {
		lo, hi = hi, lo
	}
	for _, c := range []struct{ rev, want string }{
		{lo[:4], "is ambiguous: short id " + lo[:4] + " matches " + lo[:12] + " blob, " + hi[:12] + " blob; none of them a commit"},
		{r.commitPair[0][:4], "is ambiguous: short id " + r.commitPair[0][:4] + " matches"},
		{r.commitBlob[0][:4] + "^{}", "is ambiguous"},
		{r.blobPair[0][:5], "is a blob, not a commit"},
		{r.c1[:3], `revision "` + r.c1[:3] + `" does not name a commit`},
		{"0000", "no object id starts with 0000"},
		{"nope", `revision "nope" does not name a commit`},
		{"dangling", "refs/heads/dangling points at refs/heads/nowhere, which does not exist"},
		{"broken", `ignored refs/heads/broken: it holds "garbage"`},
		{"ch0", "symbolic ref refs/heads/ch0 nests deeper than 5"},
		{"HEAD^3", "has 1 parents, not 3"},
		{"HEAD^^3", "has 2 parents, not 3"},
		{"HEAD~9", "goes past root commit " + r.c1},
		{"HEAD^{tree}", "^{tree} names a tree, never a commit"},
		{"treetag", "is a tree, not a commit"},
		{"HEAD:README", "uses a path or message search (:), which nwdes does not resolve"},
		{"main..HEAD", "uses a range (..)"},
		{"HEAD@{1}", "uses a reflog or upstream suffix"},
		{"^main", "uses negation"},
		{"HEAD^{/x}", "uses a message search"},
		{"HEAD~2147483648", "count out of range"},
		{"main\x00", "uses a NUL byte"},
	} {
		_, err := r.st.Resolve(c.rev)
		if !refusal.Named(err, "MissingFact") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%q) = %v; want MissingFact containing %q", c.rev, err, c.want)
		}
		if e, ok := refusal.As(err); ok && e.Remedy == "" {
			t.Errorf("Resolve(%q): refusal without a remedy", c.rev)
		}
	}
}

func TestResolveWalkIsBounded(t *testing.T) {
	t.Parallel()
	r := newRevRepo(t)
	loc := r.st.Location()
	st, err := git.Open(loc, git.Options{MaxWalk: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Resolve("HEAD~2"); err != nil {
		t.Fatalf("HEAD~2 within the bound: %v", err)
	}
	if _, err := st.Resolve("HEAD~1~1~1"); !refusal.Named(err, "WalkLimit") {
		t.Fatalf("HEAD~1~1~1 past a bound of 2: %v", err)
	}
}

// TestResolveInALinkedWorktree reads HEAD and per-worktree refs from the
// worktree's own git directory, and the rest from the common one.
func TestResolveInALinkedWorktree(t *testing.T) {
	t.Parallel()
	r := newRevRepo(t)
	wt := filepath.Join(filepath.Dir(r.dir), "wt")
	gitIn(t, r.dir, "worktree", "add", "-q", "-b", "wtbranch", wt, r.s1)
	gitIn(t, wt, "update-ref", "refs/bisect/bad", r.c2)
	gitIn(t, wt, "update-ref", "refs/worktree/mine", r.c1)
	loc, err := gitrepo.Discover(wt, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := git.Open(loc, git.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{"HEAD", "@", "HEAD~1", "wtbranch", "main", "refs/bisect/bad", "bisect/bad",
		"refs/worktree/mine", "worktree/mine", "main-worktree/HEAD", "worktrees/wt/HEAD", "FETCH_HEAD", ""} {
		got, err := st.Resolve(rev)
		want, ok := gitRevParse(wt, rev)
		if rev == "" {
			want, ok = gitRevParse(wt, "HEAD")
		}
		if ok != (err == nil) || ok && got.String() != want {
			t.Errorf("in the worktree, Resolve(%q) = %s, %v; git says %q, %v", rev, got, err, want, ok)
		}
	}
	if got, _ := st.Resolve("HEAD"); got.String() != r.s1 {
		t.Errorf("worktree HEAD = %s, want %s", got, r.s1)
	}
}

func TestResolveThroughAlternates(t *testing.T) {
	t.Parallel()
	r := newRevRepo(t)
	for _, ref := range []string{"refs/heads/broken", "refs/tags/shadow", "refs/heads/dangling"} {
		if err := os.Remove(filepath.Join(r.dir, ".git", ref)); err != nil { // git clone refuses them
			t.Fatal(err)
		}
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gitIn(t, r.dir, "clone", "-q", "--shared", r.dir, clone)
	loc, err := gitrepo.Discover(clone, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := git.Open(loc, git.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The colliding commits are unreachable, so only the alternate has them.
	for _, rev := range []string{r.s1[:7], r.commitPair[0][:6], r.commitPair[0][:4], r.commitBlob[0][:4], "origin/main", "origin/side~1"} {
		got, err := st.Resolve(rev)
		want, ok := gitRevParse(clone, rev)
		if ok != (err == nil) || ok && got.String() != want {
			t.Errorf("in the clone, Resolve(%q) = %s, %v; git says %q, %v", rev, got, err, want, ok)
		}
	}
}

func TestResolveUnbornHead(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, true)
	st := openRepo(t, dir, git.Options{})
	for _, rev := range []string{"", "HEAD", "@", "HEAD~1"} {
		_, err := st.Resolve(rev)
		if !refusal.Named(err, "MissingFact") || !strings.Contains(err.Error(), "HEAD points at refs/heads/main, which does not exist") {
			t.Errorf("Resolve(%q) with no commits: %v", rev, err)
		}
	}
}

// FuzzResolve feeds arbitrary revisions to Resolve over a fixed repository.
// Resolve must never panic, and whatever it resolves must be a commit and
// what git rev-parse --verify REV^{commit} says. git runs only when Resolve
// succeeds, which for random input is rare, so the loop stays fast.
func FuzzResolve(f *testing.F) {
	r := newRevRepo(f)
	for _, rev := range r.revisions() {
		f.Add(rev)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		got, err := r.st.Resolve(rev)
		if err != nil {
			if _, ok := refusal.As(err); !ok {
				t.Fatalf("Resolve(%q): %v is not a refusal", rev, err)
			}
			return
		}
		if got.IsZero() {
			t.Fatalf("Resolve(%q) succeeded with the zero id", rev)
		}
		if refusedThoughGitAccepts[rev] != "" {
			t.Fatalf("Resolve(%q) succeeded; it is listed as refused", rev)
		}
		if strings.IndexByte(rev, 0) >= 0 {
			t.Fatalf("Resolve(%q) succeeded on a revision git cannot be given", rev)
		}
		typ := gitIn(t, r.dir, "cat-file", "-t", got.String())
		if typ != "commit" {
			t.Fatalf("Resolve(%q) = %s, a %s", rev, got, typ)
		}
		oracle := rev
		if oracle == "" {
			oracle = "HEAD"
		}
		want, ok := gitRevParse(r.dir, oracle)
		if !ok || want != got.String() {
			t.Fatalf("Resolve(%q) = %s; git rev-parse --verify %q says %q (ok=%v)", rev, got, oracle+"^{commit}", want, ok)
		}
	})
}
