package trust

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestAddLineOnceAndRemoveLinesKeepsTheRestByteForByte(t *testing.T) {
	key, _ := ssh.NewPublicKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public())
	other := "# kept\r\nauth-* ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP0 someone" // no final newline
	out, added, err := AddLine([]byte(other), "greeting", key, "me@host")
	if err != nil || !added {
		t.Fatalf("AddLine: added %v, %v", added, err)
	}
	if !strings.HasPrefix(string(out), other+"\n") || !strings.HasSuffix(string(out), " me@host\n") {
		t.Fatalf("AddLine wrote %q", out)
	}
	if again, added, err := AddLine(out, "greeting", key, ""); err != nil || added || string(again) != string(out) {
		t.Fatalf("AddLine twice: added %v, %v, %q", added, err, again)
	}
	if _, _, err := AddLine(nil, "bad pattern", key, ""); err == nil {
		t.Fatal("AddLine took a pattern with a space")
	}
	back, n := RemoveLines(out, "greeting", key)
	if n != 1 || string(back) != other+"\n" {
		t.Fatalf("RemoveLines: %d, %q", n, back)
	}
	if _, n := RemoveLines(back, "greeting", key); n != 0 {
		t.Fatalf("RemoveLines removed %d lines that do not give greeting to the key", n)
	}
}
