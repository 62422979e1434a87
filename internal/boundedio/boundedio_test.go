package boundedio_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/refusal"
)

var ten = boundedio.Limit{Bytes: 10, Of: "a test input", Remedy: "give less"}

func TestAFileAtTheLimitIsReadWhole(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := boundedio.ReadFile(p, ten)
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}

func TestAFileOverTheLimitIsRefusedNamingTheLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := boundedio.ReadFile(p, ten)
	r, ok := refusal.As(err)
	if !ok || r.Name != refusal.InputTooLarge || r.Class != refusal.Refused || r.Remedy != "give less" ||
		!strings.Contains(r.Detail, "more than 10 bytes, the most a test input may hold") {
		t.Fatalf("ReadFile = %v (%+v)", err, r)
	}
	named := ten
	named.Refusal = refusal.RecordTooLarge
	if _, err := boundedio.ReadFile(p, named); !refusal.Named(err, refusal.RecordTooLarge) {
		t.Fatalf("a limit's own refusal name is not used: %v", err)
	}
}

func TestWhatIsNotARegularFileIsRefusedWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, c := range []struct{ path, kind string }{
		{fifo, "a named pipe"},
		{"/dev/zero", "a character device"},
		{dir, "a directory"},
		{filepath.Join(dir, "missing"), "cannot read"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		done := make(chan error, 1)
		go func() { _, err := boundedio.ReadFile(c.path, ten); done <- err }()
		select {
		case err := <-done:
			if r, ok := refusal.As(err); !ok || r.Name != refusal.InputUnreadable || r.Class != refusal.Unreadable || !strings.Contains(r.Detail, c.kind) {
				t.Errorf("ReadFile(%s) = %v", c.path, err)
			}
		case <-ctx.Done():
			t.Errorf("ReadFile(%s) blocked", c.path)
		}
		cancel()
	}
}

func TestASymlinkToARegularFileIsFollowed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if b, err := boundedio.ReadFile(filepath.Join(dir, "l"), ten); err != nil || string(b) != "ok" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z")); err != nil {
		t.Fatal(err)
	}
	if _, err := boundedio.ReadFile(filepath.Join(dir, "z"), ten); !refusal.Named(err, refusal.InputUnreadable) {
		t.Fatalf("a symlink to a device is read: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

func TestAnEndlessStreamIsRefusedAfterTheLimit(t *testing.T) {
	if _, err := boundedio.ReadAll(endless{}, "stdin", ten); !refusal.Named(err, refusal.InputTooLarge) {
		t.Fatalf("ReadAll = %v", err)
	}
	if b, err := boundedio.ReadAll(strings.NewReader("short"), "stdin", ten); err != nil || string(b) != "short" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
}

func TestAReaderPassesTheLimitThroughAndRefusesTheByteAfter(t *testing.T) {
	r := boundedio.NewReader(strings.NewReader("0123456789"), "stdin", ten)
	if b, err := io.ReadAll(r); err != nil || string(b) != "0123456789" || r.Err() != nil {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	r = boundedio.NewReader(io.MultiReader(strings.NewReader("0123"), endless{}), "stdin", ten)
	var got bytes.Buffer
	_, err := io.Copy(&got, r)
	if !refusal.Named(err, refusal.InputTooLarge) || !refusal.Named(r.Err(), refusal.InputTooLarge) || got.Len() != 10 {
		t.Fatalf("copied %d bytes, err %v, Err %v", got.Len(), err, r.Err())
	}
}
