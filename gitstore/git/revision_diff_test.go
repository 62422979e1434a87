package git_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// diffLong runs the differential revision test at full size: every object
// abbreviated at every length in both cases, and many more generated
// revisions.
var diffLong = flag.Bool("diff.long", false, "run the differential tests against git at full size")

// gitTimeout bounds one git rev-parse; git answers in milliseconds, so
// reaching it means git hung, which fails the test rather than counting as
// a refusal.
const gitTimeout = 20 * time.Second

// diffRevRepo is a repository holding every kind of name Resolve reads, for
// comparing Resolve with git rev-parse:
//
//   - linear history, a merge, an octopus merge and a second root commit;
//   - lightweight tags and annotated tags of commits, trees and blobs, and
//     tags of tags two levels deep;
//   - branches and tags of one name, branches named like an abbreviated id,
//     like a full id and like git describe output, names with @, non-ASCII
//     and a leading dash, a branch called HEAD;
//   - remote-tracking refs with symbolic and plain <remote>/HEAD, and a
//     branch of the same name as a remote;
//   - packed refs, some overridden by loose ones, one hidden behind a
//     directory of loose refs, and notes;
//   - symbolic refs (chains up to and past git's depth, dangling), the same
//     as symbolic links (core.preferSymlinkRefs), and a link to a file
//     outside refs/;
//   - ref files of every odd shape git's parser decides on: \v, \f, NUL,
//     CRLF, leading space, upper case, 39 and 41 digits, text after the id,
//     "ref:" without space or with tabs, overlong files;
//   - pseudorefs (FETCH_HEAD of several lines, ORIG_HEAD in upper case,
//     MERGE_HEAD, a symbolic CHERRY_PICK_HEAD) and a lower-case file in the
//     git directory that holds an id;
//   - objects whose ids share 4 to 7 leading digits: two blobs, a blob and
//     a commit, a blob and an annotated tag, a tree and a commit, a tag of a
//     tree and a commit, two commits, a tag of a commit and a commit, three
//     objects on one prefix; some packed, some loose.
type diffRevRepo struct {
	dir     string
	st      *git.Repo
	ids     map[string]string // commits and tags by role
	refs    []string          // every name git may read as a ref here
	objects []string          // every object id git lists, sorted
	types   map[string]string // object id -> type
	tags    []string          // tag names, for describe-like revisions
}

func newDiffRevRepo(t testing.TB) *diffRevRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := gittest.Init(t, false)
	gitDir := filepath.Join(dir, ".git")
	r := &diffRevRepo{dir: dir, ids: map[string]string{}}
	g := func(args ...string) string { return gitIn(t, dir, args...) }
	commit := func(role, file string) string {
		gittest.WriteFile(t, dir, file, role+"\n")
		g("add", "-A")
		g("commit", "-q", "-m", role)
		r.ids[role] = g("rev-parse", "HEAD")
		return r.ids[role]
	}
	id := func(role string) string { return r.ids[role] }

	r.ids["c1"] = g("rev-parse", "HEAD")
	for i := 2; i <= 6; i++ {
		commit(fmt.Sprintf("c%d", i), fmt.Sprintf("f%d", i))
	}
	g("checkout", "-q", "-b", "side", id("c2"))
	commit("s1", "side1")
	commit("s2", "side2")
	g("checkout", "-q", "main")
	g("merge", "-q", "--no-ff", "-m", "merge side", "side")
	r.ids["m1"] = g("rev-parse", "HEAD")
	for _, b := range []string{"o1", "o2"} {
		g("checkout", "-q", "-b", b, id("c4"))
		commit(b, b)
	}
	g("checkout", "-q", "main")
	g("merge", "-q", "--no-ff", "-m", "octopus", "o1", "o2")
	r.ids["oct"] = g("rev-parse", "HEAD")
	commit("c7", "f7")
	r.ids["c1tree"] = g("rev-parse", id("c1")+"^{tree}")
	r.ids["root2"] = g("commit-tree", "-m", "second root", id("c1tree"))
	g("update-ref", "refs/heads/root2", id("root2"))

	for _, args := range [][]string{
		{"tag", "lw", id("c3")},
		{"tag", "-a", "-m", "v1", "v1", id("m1")},
		{"tag", "-a", "-m", "v2", "v2", id("oct")},
		{"tag", "-a", "-m", "a tag of a tag", "vv1", "v1"},
		{"tag", "-a", "-m", "a tag of a tag of a tag", "vvv1", "vv1"},
		{"tag", "-a", "-m", "a tree", "ttree", id("c5") + "^{tree}"},
		{"tag", "-a", "-m", "a tag of a tree tag", "tttree", "ttree"},
		{"tag", "-a", "-m", "a blob", "tblob", id("c1") + ":README"},
		{"tag", "lwtree", id("c5") + "^{tree}"},
		{"tag", "lwblob", id("c1") + ":README"},
		{"tag", "dup", id("c2")},
		{"branch", "dup", id("c4")},
		{"branch", id("c2")[:7], id("c5")},
		{"update-ref", "refs/tags/" + id("c1"), id("c6")},
		{"branch", "x-g" + id("c3")[:7], id("c1")},
		{"branch", "feature/x", id("s1")},
		{"branch", "feature/y/z", id("s2")},
		{"update-ref", "refs/heads/a@b", id("c2")},
		{"update-ref", "refs/heads/日本", id("c3")},
		{"update-ref", "refs/heads/HEAD", id("c4")},
		{"update-ref", "refs/heads/-dash", id("c5")},
		{"update-ref", "refs/remotes/origin/main", id("m1")},
		{"symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"},
		{"update-ref", "refs/remotes/origin/feature/x", id("s2")},
		{"update-ref", "refs/remotes/upstream/HEAD", id("c2")},
		{"update-ref", "refs/remotes/solo/dev", id("c3")},
		{"symbolic-ref", "refs/remotes/solo/HEAD", "refs/remotes/solo/dev"},
		{"branch", "solo", id("c6")},
		{"update-ref", "refs/nwdes/examine", id("s1")},
		{"notes", "add", "-m", "a note", id("c2")},
		{"branch", "packedonly", id("c2")},
		{"branch", "overridden", id("c1")},
		{"branch", "dirpacked", id("c3")},
		{"pack-refs", "--all"},
		{"update-ref", "refs/heads/overridden", id("c2")},
		{"branch", "loose", id("c6")},
		{"symbolic-ref", "refs/heads/ch4", "refs/heads/main"},
		{"symbolic-ref", "refs/heads/ch3", "refs/heads/ch4"},
		{"symbolic-ref", "refs/heads/ch2", "refs/heads/ch3"},
		{"symbolic-ref", "refs/heads/ch1", "refs/heads/ch2"},
		{"symbolic-ref", "refs/heads/ch0", "refs/heads/ch1"},
		{"symbolic-ref", "refs/heads/dangling", "refs/heads/nowhere"},
		{"-c", "core.preferSymlinkRefs=true", "symbolic-ref", "refs/heads/sl", "refs/heads/main"},
		{"-c", "core.preferSymlinkRefs=true", "symbolic-ref", "refs/heads/slpacked", "refs/heads/packedonly"},
		{"-c", "core.preferSymlinkRefs=true", "symbolic-ref", "refs/heads/slsl", "refs/heads/sl"},
		{"-c", "core.preferSymlinkRefs=true", "symbolic-ref", "refs/heads/sldangling", "refs/heads/nowhere"},
		{"-c", "core.preferSymlinkRefs=true", "symbolic-ref", "refs/remotes/linked/HEAD", "refs/remotes/origin/main"},
	} {
		g(args...)
	}
	r.ids["v1"] = g("rev-parse", "refs/tags/v1")
	if fi, err := os.Lstat(filepath.Join(gitDir, "refs", "heads", "sl")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("core.preferSymlinkRefs made no symbolic link: %v", err)
	}
	r.collisions(t)

	// Files git reads as refs, written by hand.
	c1, c2, c3 := id("c1"), id("c2"), id("c3")
	spaces := strings.Repeat(" ", 5000)
	for name, content := range map[string]string{
		"refs/heads/bad/vt":        c1 + "\v\n",
		"refs/heads/bad/ff":        c1 + "\f",
		"refs/heads/bad/nul":       c1 + "\x00junk\n",
		"refs/heads/bad/crlf":      c1 + "\r\n",
		"refs/heads/bad/lead":      " " + c1 + "\n",
		"refs/heads/bad/upper":     strings.ToUpper(c1) + "\n",
		"refs/heads/bad/short":     c1[:39] + "\n",
		"refs/heads/bad/long":      c1 + "0\n",
		"refs/heads/bad/trail":     c1 + " trailing text\n",
		"refs/heads/bad/tab":       c1 + "\tx\n",
		"refs/heads/bad/glued":     c1 + "junk\n",
		"refs/heads/bad/empty":     "",
		"refs/heads/bad/nospace":   "ref:refs/heads/main\n",
		"refs/heads/bad/tabs":      "ref:\t refs/heads/main \t\n",
		"refs/heads/bad/symvt":     "ref:\vrefs/heads/main\n",
		"refs/heads/bad/symvtend":  "ref: refs/heads/main\v\n",
		"refs/heads/bad/symnul":    "ref: refs/heads/main\x00junk\n",
		"refs/heads/bad/symbad":    "ref: refs/heads/ma..in\n",
		"refs/heads/bad/symlong":   "ref: refs/heads/main" + spaces + "x\n",
		"refs/heads/bad/symlongok": "ref: refs/heads/main" + spaces + "\n",
		"refs/heads/bad/hexlong":   c1 + spaces + "x\n",
		"refs/heads/bad/onelevel":  "ref: main\n",
		"refs/heads/bad/tohead":    "ref: HEAD\n",
		"refs/heads/bad/toself":    "ref: refs/heads/bad/toself\n",
		"refs/heads/bad/tofetch":   "ref: FETCH_HEAD\n",
		"refs/heads/bad/lower":     "REF: refs/heads/main\n",
		"refs/heads/dirpacked/x":   c2 + "\n",
		"refs/tags/shadow":         "not an id\n",
		"FETCH_HEAD":               c2 + "\t\tbranch 'main' of /elsewhere\n" + c1 + "\tnot-for-merge\tbranch 'side' of /elsewhere\n",
		"ORIG_HEAD":                strings.ToUpper(c3) + "\n",
		"MERGE_HEAD":               c3 + "\n" + c2 + "\n",
		"CHERRY_PICK_HEAD":         "ref: refs/heads/side\n",
		"foo":                      c2 + "\n",
		"elsewhere":                c3 + "\n",
	} {
		gittest.WriteFile(t, gitDir, name, content)
	}
	g("update-ref", "refs/heads/shadow", id("s1"))
	if err := os.Symlink("../../elsewhere", filepath.Join(gitDir, "refs", "heads", "slfile")); err != nil {
		t.Fatal(err)
	}

	r.tags = []string{"v1", "v2", "vv1", "lw", "dup", "nope"}
	r.scan(t)
	for _, ref := range []string{"refs/heads/sl", "refs/heads/bad/symnul", "refs/heads/dirpacked/x"} {
		if !slices.Contains(r.refs, ref) {
			t.Fatalf("%s is not among the ref names compared", ref)
		}
	}
	return r
}

// scan lists what the revisions are generated from: every ref name git
// lists, every file under refs/ (git lists neither broken refs nor
// symbolic links), files of the git directory, and every object; and it
// opens the Store.
func (r *diffRevRepo) scan(t testing.TB) {
	t.Helper()
	gitDir := filepath.Join(r.dir, ".git")
	r.refs = slices.Concat(strings.Split(gitIn(t, r.dir, "for-each-ref", "--format=%(refname)"), "\n"), []string{
		"HEAD", "FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_HEAD", "foo", "elsewhere",
		"config", "description", "index", "objects", "logs/HEAD", "packed-refs", "refs", "refs/heads", "refs/heads/nowhere",
		"main-worktree/HEAD",
	})
	err := filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, err := filepath.Rel(gitDir, p)
			r.refs = append(r.refs, filepath.ToSlash(rel))
			return err
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(r.refs)
	r.refs = slices.Compact(slices.DeleteFunc(r.refs, func(s string) bool { return s == "" }))

	r.types = map[string]string{}
	for line := range strings.SplitSeq(gitIn(t, r.dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"), "\n") {
		oid, typ, _ := strings.Cut(line, " ")
		r.types[oid] = typ
		r.objects = append(r.objects, oid)
	}
	sort.Strings(r.objects)

	loc, err := gitrepo.Discover(r.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.st, err = git.Open(loc, git.Options{}); err != nil {
		t.Fatal(err)
	}
}

// collideDigits finds content (from gen) whose id as typ shares its first
// digits hex digits with target, or with target empty two contents whose
// ids share them with each other. It returns the contents and their ids.
func collideDigits(typ, target string, digits int, gen func(i int) []byte) (datas [2][]byte, ids [2]string) {
	seen := map[string]int{}
	for i := 0; ; i++ {
		d := gen(i)
		id := hashObject(typ, d)
		if target != "" {
			if id[:digits] == target[:digits] && id != target {
				return [2][]byte{nil, d}, [2]string{target, id}
			}
			continue
		}
		if j, ok := seen[id[:digits]]; ok {
			return [2][]byte{gen(j), d}, [2]string{hashObject(typ, gen(j)), id}
		}
		seen[id[:digits]] = i
	}
}

// collisions writes objects whose ids share leading digits with each other
// or with the history's commits and tags, packs some of them and leaves the
// rest loose.
func (r *diffRevRepo) collisions(t testing.TB) {
	t.Helper()
	g := func(args ...string) string { return gitIn(t, r.dir, args...) }
	tree, v1 := r.ids["c1tree"], r.ids["v1"]
	blob := func(tag string) func(i int) []byte {
		return func(i int) []byte { return fmt.Appendf(nil, "%s collision %d\n", tag, i) }
	}
	commitObj := func(tag string) func(i int) []byte {
		return func(i int) []byte {
			return fmt.Appendf(nil, "tree %s\nauthor Tester <tester@example.com> 1767225600 +0000\ncommitter Tester <tester@example.com> 1767225600 +0000\n\n%s %d\n", tree, tag, i)
		}
	}
	tagObj := func(obj, typ string) func(i int) []byte {
		return func(i int) []byte {
			return fmt.Appendf(nil, "object %s\ntype %s\ntag t%d\ntagger Tester <tester@example.com> 1767225600 +0000\n\ncolliding\n", obj, typ, i)
		}
	}
	treeObj := func(i int) []byte {
		h := oid.MustParse(r.ids["c1"])
		return append(fmt.Appendf(nil, "100644 entry%d\x00", i), h.Bytes()...)
	}
	var packed, loose []string
	write := func(typ string, datas [2][]byte, ids [2]string, pack bool) {
		for i := range 2 {
			if datas[i] == nil {
				continue
			}
			writeObject(t, r.dir, typ, datas[i], ids[i])
			if pack {
				packed = append(packed, ids[i])
			} else {
				loose = append(loose, ids[i])
			}
		}
	}
	d, ids := collideDigits("blob", "", 4, blob("pair4"))
	write("blob", d, ids, false)
	d, ids = collideDigits("blob", "", 6, blob("pair6"))
	write("blob", d, ids, true)
	d, ids = collideDigits("blob", "", 7, blob("pair7"))
	write("blob", d, ids, false)
	d, ids = collideDigits("blob", r.ids["c2"], 4, blob("c2"))
	write("blob", d, ids, true)
	d, ids = collideDigits("blob", v1, 4, blob("v1"))
	write("blob", d, ids, false)
	d, ids = collideDigits("tree", r.ids["c3"], 4, treeObj)
	write("tree", d, ids, true)
	d, ids = collideDigits("tag", r.ids["c4"], 4, tagObj(tree, "tree"))
	write("tag", d, ids, false)
	d, ids = collideDigits("commit", "", 5, commitObj("pair5"))
	write("commit", d, ids, true)
	d, ids = collideDigits("tag", r.ids["c6"], 4, tagObj(r.ids["c1"], "commit"))
	write("tag", d, ids, false)
	for _, tag := range []string{"three-a", "three-b"} {
		d, ids = collideDigits("blob", r.ids["c5"], 4, blob(tag))
		write("blob", d, ids, tag == "three-a")
	}
	d, ids = collideDigits("commit", r.ids["s1"], 4, commitObj("s1"))
	write("commit", d, ids, false)
	cmd := exec.Command("git", "pack-objects", "-q", filepath.Join(r.dir, ".git", "objects", "pack", "pack"))
	cmd.Dir = r.dir
	cmd.Env = gittest.Env(filepath.Dir(r.dir))
	cmd.Stdin = strings.NewReader(strings.Join(packed, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pack-objects: %v\n%s", err, out)
	}
	g("prune-packed")
	t.Logf("colliding objects: %d packed, %d loose", len(packed), len(loose))
}

// revOutcome is what one revision came to.
type revOutcome struct {
	rev    string
	gitID  string // what git rev-parse printed, "" when it refused
	got    oid.ID
	err    error
	reason string // why Resolve declines rev, if it does on purpose
}

// rewrittenRefusal is what Resolve's refusal says when the answer would
// depend on a replace ref or graft, which it declines to follow.
const rewrittenRefusal = "nwdes does not follow replace refs or grafts"

// resolve runs Resolve on o.rev and records what it declined: the syntax
// declined names, and reading through a replace ref or graft.
func (o *revOutcome) resolve(st *git.Repo) {
	o.reason = declined(o.rev)
	o.got, o.err = st.Resolve(o.rev)
	if o.reason == "" && o.err != nil && strings.Contains(o.err.Error(), rewrittenRefusal) {
		o.reason = "an object git reads through a replace ref or graft"
	}
}

// gitVerify is the oracle: git rev-parse --verify --quiet REV^{commit}, ok
// only when it prints exactly one object id. A revision git cannot be
// given (a NUL byte) is one git refuses.
func gitVerify(ctx context.Context, dir, rev string) (string, bool, error) {
	if rev == "" {
		rev = "HEAD"
	}
	if strings.IndexByte(rev, 0) >= 0 {
		return "", false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	cmd.Dir = dir
	cmd.Env = gittest.Env(filepath.Dir(dir))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", false, fmt.Errorf("git rev-parse %q: %w", rev, ctx.Err())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return "", false, fmt.Errorf("git rev-parse %q: %w", rev, err)
	}
	s := strings.TrimSuffix(stdout.String(), "\n")
	if err != nil || len(s) != 40 || strings.Contains(s, "\n") {
		return "", false, nil
	}
	return s, true, nil
}

// declined says why Resolve refuses rev on purpose whatever git makes of
// it, or "" if Resolve claims to resolve rev as git does. The reasons are
// the syntax Resolve's doc comment lists as refused.
func declined(rev string) string {
	if why := git.UnsupportedSyntax(rev); why != "" {
		return why
	}
	if textAfterPeel(rev) {
		return "text after ^{type} up to a later }"
	}
	return ""
}

// textAfterPeel reports whether git would read a peel suffix of rev as
// ^{type} followed by text it ignores ("^{commit}x}", "^{}}"): git takes
// the type from the last "^{" up to the first "}" after it. It strips
// suffixes off the end as git's get_oid_1 does.
func textAfterPeel(rev string) bool {
	types := []string{"commit}", "tag}", "tree}", "blob}", "object}", "}"}
	name := rev
	for {
		i := len(name)
		for i > 0 && '0' <= name[i-1] && name[i-1] <= '9' {
			i--
		}
		if i > 0 && (name[i-1] == '~' || name[i-1] == '^') {
			name = name[:i-1]
			continue
		}
		j := strings.LastIndex(name, "^{")
		if !strings.HasSuffix(name, "}") || j < 0 {
			return false
		}
		if !slices.Contains(types, name[j+2:]) {
			for _, typ := range types {
				if strings.HasPrefix(name[j+2:], typ) {
					return true
				}
			}
			return false
		}
		name = name[:j]
	}
}

// resolveBoth runs Resolve on every revision (from four goroutines: a Store
// is safe for concurrent use) and asks git about each. git's answers come
// from one git cat-file --batch-check process, which reads each revision
// with the same get_oid_with_context as git rev-parse --verify and costs
// one process instead of thousands; revisions a line cannot carry, and
// @{...}, go to git rev-parse --verify itself. Every check'th revision
// (every one with -diff.long) is asked of git rev-parse --verify too, and
// the two must agree, so the stand-in is checked rather than assumed.
func resolveBoth(t *testing.T, r *diffRevRepo, revs []string, check int) []revOutcome {
	t.Helper()
	out := make([]revOutcome, len(revs))
	for i, rev := range revs {
		out[i].rev = rev
	}
	ctx := t.Context()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				out[i].resolve(r.st)
			}
		})
	}
	wg.Go(func() {
		ids, err := gitBatchVerify(ctx, r.dir, revs)
		if err != nil {
			fail(err)
			return
		}
		for i, id := range ids {
			out[i].gitID = id
		}
	})
	for i := range revs {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}

	sample := make(chan int)
	var checked, mismatched int
	for range 4 {
		wg.Go(func() {
			for i := range sample {
				want, _, err := gitVerify(ctx, r.dir, revs[i])
				mu.Lock()
				checked++
				switch {
				case err != nil:
					errs = append(errs, err)
				case want != out[i].gitID:
					if mismatched++; mismatched <= 10 {
						t.Errorf("git's oracles disagree on %q: rev-parse --verify says %q, cat-file --batch-check %q", revs[i], want, out[i].gitID)
					}
				}
				mu.Unlock()
			}
		})
	}
	for i := range revs {
		if i%check == 0 {
			sample <- i
		}
	}
	close(sample)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	t.Logf("git cat-file --batch-check and git rev-parse --verify agree on all %d revisions asked of both", checked-mismatched)
	return out
}

// gitBatchVerify returns, for each revision, the commit id git names for
// REV^{commit} ("" where git names none), asking one git cat-file
// --batch-check process and git rev-parse --verify for the revisions a
// line cannot carry.
func gitBatchVerify(ctx context.Context, dir string, revs []string) ([]string, error) {
	ids := make([]string, len(revs))
	var in bytes.Buffer
	var batched []int
	for i, rev := range revs {
		if rev == "" {
			rev = "HEAD"
		}
		// git dies on some @{...} revisions (an upstream that is not
		// configured) instead of answering "missing", which would end
		// the batch.
		if strings.ContainsAny(rev, "\n\r\x00") || strings.Contains(rev, "@{") {
			id, _, err := gitVerify(ctx, dir, rev)
			if err != nil {
				return nil, err
			}
			ids[i] = id
			continue
		}
		fmt.Fprintf(&in, "%s^{commit}\n", rev)
		batched = append(batched, i)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch-check=%(objectname)")
	cmd.Dir = dir
	cmd.Env = gittest.Env(filepath.Dir(dir))
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file --batch-check: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(batched) {
		return nil, fmt.Errorf("git cat-file --batch-check answered %d lines for %d revisions", len(lines), len(batched))
	}
	for k, i := range batched {
		if l := lines[k]; len(l) == 40 && !strings.Contains(l, " ") {
			ids[i] = l
		}
	}
	return ids, nil
}

// disagreement returns what is wrong with an outcome, or "" if Resolve
// answered as its contract says: the id git names when git resolves the
// revision, a refusal when git does not, and a MissingFact refusal for the
// syntax it declines whatever git makes of it.
func (o revOutcome) disagreement() string {
	_, isRefusal := refusal.As(o.err)
	switch {
	case o.reason != "" && o.err == nil:
		return fmt.Sprintf("resolved to %s, but Resolve declines %s", o.got, o.reason)
	case o.reason != "" && !refusal.Named(o.err, "MissingFact"):
		return fmt.Sprintf("declined (%s) with %v, not a MissingFact refusal", o.reason, o.err)
	case o.reason != "":
		return ""
	case o.gitID != "" && o.err != nil:
		return fmt.Sprintf("refused (%v); git rev-parse names %s", o.err, o.gitID)
	case o.gitID != "" && o.got.String() != o.gitID:
		return fmt.Sprintf("resolved to %s; git rev-parse names %s", o.got, o.gitID)
	case o.gitID == "" && o.err == nil:
		return fmt.Sprintf("resolved to %s; git rev-parse refuses it", o.got)
	case o.gitID == "" && !isRefusal:
		return fmt.Sprintf("failed with %v, which is not a refusal; git refuses it too", o.err)
	}
	return ""
}

// revisionsToCompare generates the revisions checked against git: refs by
// every name git's rules reach them by and mangled variants, HEAD and @,
// abbreviations of object ids at every length from 4 to 40 (and 1 to 3
// and 41), describe-like names, suffix chains, syntax Resolve declines and
// random nonsense. The long run abbreviates every object at every length
// in both cases; the default run does so for commits, tags and colliding
// objects and samples the rest. walks narrows the default run to what a
// rewritten history changes: refs and ids of commits and tags, each with
// walks through parents, and no describe-like names or nonsense.
func (r *diffRevRepo) revisionsToCompare(long, walks bool) []string {
	rng := rand.New(rand.NewPCG(21, 22))
	revs := []string{"", "HEAD", "@", "@@", "HEAD@", "@/x", "head", "Head", "~", "^", "^{}", "{}", "}", "-", "--", "-g", "g",
		"refs/", "heads/", "/", "//", ".", "..", "...", "refs/heads/.", "main.lock", "main~", "main^", "main^{}", "main^{",
		"main^{commit", "main}", "~1", "^0", "HEAD~2147483647", "HEAD~2147483648", "HEAD^2147483647", "HEAD~99999999999999999999",
		"HEAD^{commit}^{commit}^{}", "HEAD^{tag}", "HEAD^{object}", "HEAD^{tree}", "HEAD^{blob}", "HEAD^{foo}", "HEAD^{COMMIT}",
		"HEAD^{commit}}", "HEAD^{commit}x}", "HEAD^{}}", "HEAD^{}x}", "HEAD^{tag}x}^0", "HEAD:f2", ":README", ":/c3", "HEAD@{0}",
		"@{-1}", "main@{upstream}", "main..HEAD", "main...HEAD", "^HEAD", "HEAD^{/c3}", "HEAD^!", "HEAD^@", "HEAD^-", "HEAD^-1",
		"main\x00", "v1-2-g" + r.ids["c3"][:7] + ":x", "main@{0}-g" + r.ids["c3"][:7],
	}
	suffixes := []string{"~", "~0", "~1", "~2", "~3", "~5", "~9", "~40", "^", "^0", "^1", "^2", "^3", "^4", "^00", "~01",
		"^{}", "^{commit}", "^{tag}", "^{object}", "^{tree}", "^{blob}", "^{foo}", "^{", "}", "^{commit}x}", "^{}}",
		"^!", "^@", "^-", "@{0}", "@{u}", ":f2", "^{/c}", "..HEAD", "~2147483647", "^2147483648", " ", "/", "@", ".lock", "-g"}
	withSuffixes := func(base string, n int) {
		for range n {
			rev := base
			for range 1 + rng.IntN(3) {
				rev += suffixes[rng.IntN(len(suffixes))]
			}
			revs = append(revs, rev)
		}
	}

	// Refs, by every name a rule of git's reaches them by.
	var names []string
	for _, ref := range r.refs {
		names = append(names, ref)
		rest, ok := strings.CutPrefix(ref, "refs/")
		if !ok {
			continue
		}
		names = append(names, rest)
		for _, p := range []string{"heads/", "tags/", "remotes/"} {
			if short, ok := strings.CutPrefix(rest, p); ok {
				names = append(names, short)
				if remote, ok := strings.CutSuffix(short, "/HEAD"); ok && p == "remotes/" {
					names = append(names, remote)
				}
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, n := range names {
		revs = append(revs, n, n+"~1", n+"^{}")
		if walks || long {
			revs = append(revs, n+"~2", n+"~3", n+"~4", n+"^2", n+"^^2")
		}
		if rng.IntN(4) == 0 {
			revs = append(revs, strings.ToUpper(n), n+"/", "/"+n, n+".lock", strings.Replace(n, "/", "//", 1), n+"x", n[:len(n)-1])
		}
		withSuffixes(n, 2)
	}

	// Object ids, abbreviated.
	interesting := map[string]bool{}
	for _, id := range r.ids {
		interesting[id] = true
	}
	for i, id := range r.objects {
		// Neighbours in sorted order share the longest prefixes.
		if i > 0 && id[:4] == r.objects[i-1][:4] || i+1 < len(r.objects) && id[:4] == r.objects[i+1][:4] {
			interesting[id] = true
		}
	}
	for _, id := range r.objects {
		full := long || interesting[id] || r.types[id] == "commit" || r.types[id] == "tag"
		if walks && !long {
			if r.types[id] == "commit" || r.types[id] == "tag" {
				for _, k := range []int{4, 7, 12, 40} {
					revs = append(revs, id[:k], id[:k]+"~1", id[:k]+"~2", id[:k]+"^2", id[:k]+"^{}")
				}
			}
			continue
		}
		for k := 1; k <= 40; k++ {
			if full || k <= 8 || k%8 == 0 || k >= 39 {
				revs = append(revs, id[:k])
			}
			if long || full && rng.IntN(8) == 0 {
				revs = append(revs, strings.ToUpper(id[:k]), id[:k]+"^{}", id[:k]+"~0")
			}
		}
		revs = append(revs, id+"0", strings.ToUpper(id))
		withSuffixes(id[:4+rng.IntN(6)], 1)
		if full {
			withSuffixes(id, 1)
		}
	}

	if walks && !long {
		slices.Sort(revs)
		return slices.Compact(revs)
	}

	// Describe-like names: <anything>-g<abbreviated id>.
	for _, id := range r.objects {
		for _, k := range []int{3, 4, 5, 7, 12, 40, 41} {
			if k > len(id) || !long && rng.IntN(3) != 0 {
				continue
			}
			abbrev := id[:min(k, 40)]
			if k == 41 {
				abbrev = id + "0"
			}
			tag := r.tags[rng.IntN(len(r.tags))]
			revs = append(revs, fmt.Sprintf("%s-%d-g%s", tag, rng.IntN(20), abbrev), "x-g"+abbrev, "-g"+abbrev, "g"+abbrev, "x-G"+abbrev)
		}
	}

	// Nonsense.
	const alphabet = "0123456789abcdefABCDEFghmnxyz@~^{}:./-_ \tHEADmainv"
	nonsense := 300
	if long {
		nonsense = 5000
	}
	for range nonsense {
		b := make([]byte, 1+rng.IntN(14))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		revs = append(revs, string(b))
	}
	if long {
		for _, n := range names {
			withSuffixes(n, 20)
		}
		for _, id := range r.objects {
			withSuffixes(id[:4+rng.IntN(37)], 10)
		}
	}
	slices.Sort(revs)
	return slices.Compact(revs)
}

// TestResolveAgreesWithGitDifferential resolves thousands of generated
// revisions with Resolve and with git rev-parse --verify REV^{commit} and
// requires the two to agree: the same commit when git resolves, a refusal
// when it does not, and a refusal, never another answer, for the syntax
// Resolve declines (recorded in the log by reason).
func TestResolveAgreesWithGitDifferential(t *testing.T) {
	t.Parallel()
	r := newDiffRevRepo(t)
	resolved, refused := compareWithGit(t, r, r.revisionsToCompare(*diffLong, false))
	if resolved < 1000 || refused < 1000 {
		t.Errorf("generator too weak: %d resolved, %d refused", resolved, refused)
	}
}

// TestResolveAgreesWithGitOverRewrittenHistory compares Resolve with git in
// repositories where git reads a history other than the one the objects
// record: shallow clones (git knows no parents of a boundary commit, even
// when an alternate has them), replace refs (a graft, a commit replaced by
// another, a tag by another, a commit by a tag) and info/grafts. Resolve
// must agree with git or refuse naming the replacement, never answer
// otherwise.
func TestResolveAgreesWithGitOverRewrittenHistory(t *testing.T) {
	for _, kind := range []string{"shallow", "shallow-with-reference", "replace-refs", "grafts"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newRewrittenRepo(t, kind)
			resolved, refused := compareWithGit(t, r, r.revisionsToCompare(*diffLong, true))
			if resolved < 50 || refused < 50 {
				t.Errorf("generator too weak: %d resolved, %d refused", resolved, refused)
			}
		})
	}
}

// compareWithGit resolves revs with Resolve and git, reports every
// disagreement, logs what was declined by reason, and returns how many
// revisions both resolved alike and both refused.
func compareWithGit(t *testing.T, r *diffRevRepo, revs []string) (resolved, refused int) {
	t.Helper()
	check := 10
	switch {
	case *diffLong:
		check = 1
	case testing.Short():
		check = 50
	}
	outcomes := resolveBoth(t, r, revs, check)
	var bad int
	declinedGit := map[string][]string{} // reason -> revisions git resolves
	declinedBoth := map[string]int{}
	for _, o := range outcomes {
		if msg := o.disagreement(); msg != "" {
			if bad++; bad <= 200 {
				t.Errorf("Resolve(%q) %s", o.rev, msg)
			}
			continue
		}
		switch {
		case o.reason != "" && o.gitID != "":
			declinedGit[o.reason] = append(declinedGit[o.reason], o.rev)
		case o.reason != "":
			declinedBoth[o.reason]++
		case o.err == nil:
			resolved++
		default:
			refused++
		}
	}
	if bad > 200 {
		t.Errorf("... and %d more disagreements", bad-200)
	}
	t.Logf("%d revisions over %d objects and %d ref names: %d resolved as git does, %d refused as git does",
		len(revs), len(r.objects), len(r.refs), resolved, refused)
	reasons := slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for k := range declinedGit {
			seen[k] = true
		}
		for k := range declinedBoth {
			seen[k] = true
		}
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	})
	for _, reason := range reasons {
		ex := declinedGit[reason]
		t.Logf("declined, %s: %d that git resolves (e.g. %q), %d that git refuses too",
			reason, len(ex), ex[:min(3, len(ex))], declinedBoth[reason])
	}
	return resolved, refused
}

// newRewrittenRepo builds a small history (linear commits c1 to c6, a side
// branch merged as m1, annotated tags v1 and v2, a lightweight tag) and
// rewrites how git reads it as kind says.
func newRewrittenRepo(t *testing.T, kind string) *diffRevRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	src := gittest.Init(t, false)
	r := &diffRevRepo{dir: src, ids: map[string]string{}}
	g := func(args ...string) string { return gitIn(t, r.dir, args...) }
	commit := func(role string) {
		gittest.WriteFile(t, src, role, role+"\n")
		gitIn(t, src, "add", "-A")
		gitIn(t, src, "commit", "-q", "-m", role)
		r.ids[role] = gitIn(t, src, "rev-parse", "HEAD")
	}
	r.ids["c1"] = gitIn(t, src, "rev-parse", "HEAD")
	commit("c2")
	commit("c3")
	gitIn(t, src, "checkout", "-q", "-b", "side", r.ids["c2"])
	commit("s1")
	gitIn(t, src, "checkout", "-q", "main")
	gitIn(t, src, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	r.ids["m1"] = gitIn(t, src, "rev-parse", "HEAD")
	for _, c := range []string{"c4", "c5", "c6"} {
		commit(c)
	}
	gitIn(t, src, "tag", "-a", "-m", "v1", "v1", r.ids["c3"])
	gitIn(t, src, "tag", "-a", "-m", "v2", "v2", r.ids["m1"])
	gitIn(t, src, "tag", "lw", r.ids["c4"])
	r.ids["v1"] = gitIn(t, src, "rev-parse", "refs/tags/v1")
	r.ids["v2"] = gitIn(t, src, "rev-parse", "refs/tags/v2")
	r.tags = []string{"v1", "v2", "lw", "nope"}

	switch kind {
	case "shallow", "shallow-with-reference":
		// git clone --depth cuts the history below the boundary commits
		// it lists in shallow; with --reference their parents are still
		// readable through the alternate, and git still knows none.
		r.dir = filepath.Join(t.TempDir(), "clone")
		args := []string{"clone", "-q", "--depth=3"}
		if kind == "shallow-with-reference" {
			args = append(args, "--reference="+src)
		}
		gitIn(t, src, append(args, "file://"+src, r.dir)...)
		if _, err := os.Stat(filepath.Join(r.dir, ".git", "shallow")); err != nil {
			t.Fatalf("git clone --depth wrote no shallow file: %v", err)
		}
	case "replace-refs":
		gitIn(t, src, "checkout", "-q", "-b", "topic", r.ids["c1"])
		commit("t1")
		commit("t2")
		gitIn(t, src, "checkout", "-q", "main")
		g("replace", "--graft", r.ids["c5"], r.ids["c2"])
		g("replace", r.ids["c4"], r.ids["s1"])
		g("replace", r.ids["v1"], r.ids["v2"])
		g("pack-refs", "--all")
		g("replace", "-f", r.ids["t2"], r.ids["v1"])
		g("replace", "--graft", r.ids["s1"])
	case "grafts":
		gittest.WriteFile(t, filepath.Join(src, ".git"), "info/grafts",
			"# commit parents...\n"+r.ids["c5"]+" "+r.ids["c1"]+"\n"+r.ids["c3"]+"\n")
	default:
		t.Fatalf("unknown kind %q", kind)
	}
	r.scan(t)
	return r
}

// FuzzResolveAgainstGit feeds arbitrary revisions to Resolve and to git
// rev-parse --verify REV^{commit} in the repository of the differential
// test, and requires them to agree as that test does: git runs on every
// input, with a timeout.
func FuzzResolveAgainstGit(f *testing.F) {
	r := newDiffRevRepo(f)
	revs := r.revisionsToCompare(false, false)
	rng := rand.New(rand.NewPCG(31, 32))
	for range 100 {
		f.Add(revs[rng.IntN(len(revs))])
	}
	for _, rev := range []string{"", "HEAD^{commit}x}", "bad/symvt", "sl", "slpacked~1", "bad/nul", "main:f2"} {
		f.Add(rev)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		if len(rev) > 4096 {
			t.Skip("longer than any revision worth asking git about")
		}
		o := revOutcome{rev: rev}
		o.resolve(r.st)
		want, ok, err := gitVerify(t.Context(), r.dir, rev)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			o.gitID = want
		}
		if msg := o.disagreement(); msg != "" {
			t.Fatalf("Resolve(%q) %s", rev, msg)
		}
	})
}
