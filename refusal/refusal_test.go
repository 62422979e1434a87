package refusal_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nwdes/nwdes/refusal"
)

var errCause = errors.New("cause")

func TestARefusalIsFoundByNameThroughWrapping(t *testing.T) {
	r := refusal.New("PartInvalid", "set every verdict", "E2 has no verdict").Wrap(errCause)
	err := fmt.Errorf("close greeting: %w", r)
	if !refusal.Named(err, "PartInvalid") || refusal.Named(err, "MissingFact") {
		t.Fatalf("Named does not see through wrapping: %v", err)
	}
	if !errors.Is(err, &refusal.Error{Name: "PartInvalid"}) || !errors.Is(err, errCause) {
		t.Fatal("errors.Is must match the name and the cause")
	}
	got, ok := refusal.As(err)
	if !ok || got.Error() != "PartInvalid: E2 has no verdict" || got.Remedy != "set every verdict" || got.Class != refusal.Refused {
		t.Fatalf("As = %+v, %v", got, ok)
	}
	if u := refusal.NewUnreadable("InputUnreadable", "r", "x"); u.Class != refusal.Unreadable {
		t.Fatal("NewUnreadable must be of class Unreadable")
	}
}

func TestAnUnavailableEnvironmentIsItsOwnClass(t *testing.T) {
	u := refusal.NewUnavailable("SandboxUnavailable", "r", "no landlock")
	if u.Class != refusal.Unavailable || u.Class == refusal.Refused || u.Class == refusal.Unreadable {
		t.Fatalf("class %v", u.Class)
	}
	for c, want := range map[refusal.Class]string{refusal.Refused: "refused", refusal.Unreadable: "unreadable", refusal.Unavailable: "unavailable"} {
		if c.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(c), c.String(), want)
		}
	}
}
