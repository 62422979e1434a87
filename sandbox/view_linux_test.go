package sandbox

import (
	"reflect"
	"testing"
)

func TestABindThatAParentsBindAlreadyShowsIsDropped(t *testing.T) {
	ro := func(p string) viewEntry { return viewEntry{path: p, source: p} }
	rw := func(p string) viewEntry { return viewEntry{path: p, source: p, rw: true} }
	dev := func(p string) viewEntry { return viewEntry{path: p, source: p, dev: true} }
	link := func(p, to string) viewEntry { return viewEntry{path: p, link: to} }
	moved := viewEntry{path: "/nwdes/job", source: "/tmp/nwdes-job-1", rw: true}
	for _, c := range []struct {
		name    string
		in, out []viewEntry
	}{
		{"a read-only directory under a read-only root",
			[]viewEntry{ro("/usr"), link("/bin", "/usr/bin"), ro("/usr/bin")},
			[]viewEntry{ro("/usr"), link("/bin", "/usr/bin")}},
		{"a writable directory under a read-only root is kept",
			[]viewEntry{ro("/usr"), rw("/usr/local/w")}, []viewEntry{ro("/usr"), rw("/usr/local/w")}},
		{"a read-only directory under a writable one is kept",
			[]viewEntry{rw("/w"), ro("/w/r")}, []viewEntry{rw("/w"), ro("/w/r")}},
		{"a device file is kept",
			[]viewEntry{ro("/dev"), dev("/dev/null")}, []viewEntry{ro("/dev"), dev("/dev/null")}},
		{"a sibling sharing a prefix is kept",
			[]viewEntry{ro("/usr"), ro("/usr2")}, []viewEntry{ro("/usr"), ro("/usr2")}},
		{"a read-only directory under a writable one under a read-only root is kept",
			[]viewEntry{ro("/r"), rw("/r/w"), ro("/r/w/x")}, []viewEntry{ro("/r"), rw("/r/w"), ro("/r/w/x")}},
		{"a read-only directory under a read-only one under a writable root is dropped",
			[]viewEntry{rw("/w"), ro("/w/r"), ro("/w/r/x")}, []viewEntry{rw("/w"), ro("/w/r")}},
		{"a directory bound again read-only on top of its writable bind is kept",
			[]viewEntry{ro("/r"), rw("/r/w"), ro("/r/w")}, []viewEntry{ro("/r"), rw("/r/w"), ro("/r/w")}},
		{"the same directory bound twice the same way is bound once",
			[]viewEntry{ro("/r"), ro("/r")}, []viewEntry{ro("/r")}},
		{"a read-set directory inside the job directory, which the view moves, is kept at its host path",
			[]viewEntry{moved, ro("/tmp/nwdes-job-1/x")}, []viewEntry{moved, ro("/tmp/nwdes-job-1/x")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := dropCovered(c.in); !reflect.DeepEqual(got, c.out) {
				t.Fatalf("got %+v, want %+v", got, c.out)
			}
		})
	}
}
