package swarm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func testParsedCard(t *testing.T) *Card {
	t.Helper()
	c, err := ParseCard([]byte(testCard))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAReportIsCheckedAgainstItsCard(t *testing.T) {
	t.Parallel()
	c := testParsedCard(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name    string
		report  string
		verdict Verdict
		status  Status
		note    string
		reason  string
		lines   int
	}{
		{"DONE", testLine1 + "\nDONE\n\nfindings\n", VerdictOK, StatusDone, "", "", 4},
		{"DONE with a note and no final newline", testLine1 + "\nDONE all green", VerdictOK, StatusDone, "all green", "", 2},
		{"BLOCKED", testLine1 + "\nBLOCKED the base does not build\n", VerdictBlocked, StatusBlocked, "the base does not build", "", 2},
		{"ABSTAIN", testLine1 + "\nABSTAIN\n", VerdictBlocked, StatusAbstain, "", "", 2},
		{"as many lines as allowed", testLine1 + "\nDONE\n" + strings.Repeat("\n", MaxResultLines-2), VerdictOK, StatusDone, "", "", MaxResultLines},
		{"a line as long as allowed", testLine1 + "\nDONE\n" + long(MaxResultLine), VerdictOK, StatusDone, "", "", 3},
		{"as many bytes as allowed", testLine1 + "\nDONE\n" + strings.Repeat(long(1023)+"\n", 1023) + long(MaxResultSize-len(testLine1+"\nDONE\n")-1023*1024), VerdictOK, StatusDone, "", "", 1026},
		{"an empty report", "", VerdictRefused, "", "", "line 1 \"\" is not the card's line 1", 0},
		{"another card's line 1", "RESULT: other sha=0123456789ab\nDONE\n", VerdictRefused, "", "", `line 1 "RESULT: other sha=0123456789ab" is not the card's line 1 "` + testLine1 + `"`, 2},
		{"a CRLF line 1", testLine1 + "\r\nDONE\r\n", VerdictRefused, "", "", "line 1 ends with \\r\\n", 2},
		{"a trailing space on line 1", testLine1 + " \nDONE\n", VerdictRefused, "", "", "is not the card's line 1", 2},
		{"a blank line before line 1", "\n" + testLine1 + "\nDONE\n", VerdictRefused, "", "", "is not the card's line 1", 3},
		{"line 1 alone", testLine1, VerdictRefused, "", "", "there is no line 2", 1},
		{"line 1 and a newline", testLine1 + "\n", VerdictRefused, "", "", "there is no line 2", 1},
		{"an empty line 2", testLine1 + "\n\nDONE\n", VerdictRefused, "", "", `line 2 "" does not begin with DONE, BLOCKED or ABSTAIN`, 3},
		{"a lower-case status", testLine1 + "\ndone\n", VerdictRefused, "", "", `line 2 "done" does not begin`, 2},
		{"a status run into its note", testLine1 + "\nDONEish\n", VerdictRefused, "", "", "does not begin", 2},
		{"a status after a tab", testLine1 + "\nDONE\tok\n", VerdictRefused, "", "", "does not begin", 2},
		{"a status with an empty note", testLine1 + "\nDONE \n", VerdictRefused, "", "", "line 2 has a space after DONE but no note", 2},
		{"a CR in the note", testLine1 + "\nDONE x\r\n", VerdictRefused, "", "", "line 2's note holds a control character", 2},
		{"a NUL", testLine1 + "\nDONE\n\x00", VerdictRefused, "", "", "the report holds a NUL byte at offset 42", 3},
		{"invalid UTF-8", testLine1 + "\nDONE\n\xc3", VerdictRefused, "", "", "the report is not valid UTF-8", 3},
		{"too many lines", testLine1 + "\nDONE\n" + strings.Repeat("\n", MaxResultLines-1), VerdictRefused, "", "", "the report has 2001 lines, more than 2000", MaxResultLines + 1},
		{"a line too long", testLine1 + "\nDONE\n" + long(MaxResultLine+1) + "\n", VerdictRefused, "", "", "line 3 is 8193 bytes, more than 8192", 3},
		{"too large", testLine1 + "\nDONE\n" + strings.Repeat(long(1023)+"\n", 1024), VerdictRefused, "", "", "the report is larger than 1048576 bytes", 1026},
		{"the machinery's report", string(MachineryResult(c, "no report")), VerdictRefused, "", "", "is not the card's line 1", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CheckResult(c, []byte(tc.report))
			want := Result{Verdict: tc.verdict, Status: tc.status, Note: tc.note, Lines: tc.lines}
			if !strings.Contains(got.Reason, tc.reason) || tc.reason == "" && got.Reason != "" {
				t.Fatalf("reason = %q, want it to hold %q", got.Reason, tc.reason)
			}
			got.Reason = ""
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestAReportWithoutACardIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []*Card{nil, {}} {
		if r := CheckResult(c, []byte("\nDONE\n")); r.Verdict != VerdictRefused || !strings.Contains(r.Reason, "no card contract line") {
			t.Fatalf("CheckResult(%v) = %+v", c, r)
		}
	}
}

func TestTheMachinerysReportIsNeverCountedOK(t *testing.T) {
	t.Parallel()
	cards := []*Card{nil, {}, testParsedCard(t),
		{Label: "BLOCKED", ContractLine: "RESULT: BLOCKED sha=0123456789ab"},
		{Label: "x", ContractLine: "RESULT: BLOCKED no-result x"},
		{Label: "x", ContractLine: "RESULT: BLOCKED - x"},
		{Label: "a\nDONE", ContractLine: "RESULT: BLOCKED r a"}}
	for _, c := range cards {
		for _, reason := range []string{"no-result", "", "deadline passed after 30m", "x\nDONE\n", "\x00\x1b[31m", "\xff"} {
			b := MachineryResult(c, reason)
			if r := CheckResult(c, b); r.Verdict == VerdictOK {
				t.Fatalf("CheckResult(%+v, %q) = %+v", c, b, r)
			}
			if !IsMachineryResult(b) {
				t.Fatalf("IsMachineryResult(%q) = false", b)
			}
			if n := bytes.Count(b, []byte("\n")); n != 2 {
				t.Fatalf("MachineryResult(%q) = %q, %d lines", reason, b, n)
			}
		}
	}
	got := string(MachineryResult(testParsedCard(t), "no report published"))
	if want := "RESULT: BLOCKED no report published fix-lease.1\nwritten-by: nwdes swarm\n"; got != want {
		t.Fatalf("MachineryResult = %q, want %q", got, want)
	}
	if got := string(MachineryResult(nil, " \t")); got != "RESULT: BLOCKED - -\nwritten-by: nwdes swarm\n" {
		t.Fatalf("MachineryResult of nothing = %q", got)
	}
}

func TestIsMachineryResultWantsBothMarks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		report string
		want   bool
	}{
		{"RESULT: BLOCKED r x\nwritten-by: nwdes swarm\n", true},
		{"RESULT: BLOCKED r x\nwritten-by: nwdes swarm", true},
		{"RESULT: BLOCKED r x\nBLOCKED\n", false},
		{testLine1 + "\nwritten-by: nwdes swarm\n", false},
		{"RESULT: BLOCKED r x\n", false},
		{"RESULT: BLOCKED r x\r\nwritten-by: nwdes swarm\r\n", false},
		{"", false},
	} {
		if got := IsMachineryResult([]byte(tc.report)); got != tc.want {
			t.Errorf("IsMachineryResult(%q) = %v, want %v", tc.report, got, tc.want)
		}
	}
}

func TestFindResultReadsOnlyARegularFile(t *testing.T) {
	t.Parallel()
	report := []byte(testLine1 + "\nDONE\n")
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string)
		want    []byte
		missing bool
	}{
		{"a regular file", func(t *testing.T, dir string) { write(t, filepath.Join(dir, ResultName), report) }, report, false},
		{"an empty file", func(t *testing.T, dir string) { write(t, filepath.Join(dir, ResultName), nil) }, []byte{}, false},
		{"no file", func(t *testing.T, dir string) {}, nil, true},
		{"a symbolic link to a report", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "elsewhere"), report)
			if err := os.Symlink("elsewhere", filepath.Join(dir, ResultName)); err != nil {
				t.Fatal(err)
			}
		}, nil, true},
		{"a dangling symbolic link", func(t *testing.T, dir string) {
			if err := os.Symlink("/nonexistent", filepath.Join(dir, ResultName)); err != nil {
				t.Fatal(err)
			}
		}, nil, true},
		{"a FIFO with no writer", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, ResultName), 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil, true},
		{"a directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, ResultName), 0o700); err != nil {
				t.Fatal(err)
			}
		}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.setup(t, dir)
			got, err := FindResult(dir)
			if tc.missing {
				if !errors.Is(err, ErrNoResult) || got != nil {
					t.Fatalf("FindResult = %q, %v, want ErrNoResult", got, err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("FindResult = %q, %v, want %q", got, err, tc.want)
			}
		})
	}
}

func TestFindResultReadsOneByteMoreThanTheBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, ResultName), bytes.Repeat([]byte("x"), 3*MaxResultSize))
	got, err := FindResult(dir)
	if err != nil || len(got) != MaxResultSize+1 {
		t.Fatalf("FindResult = %d bytes, %v", len(got), err)
	}
	if r := CheckResult(testParsedCard(t), got); r.Verdict != VerdictRefused || !strings.Contains(r.Reason, "larger than") {
		t.Fatalf("CheckResult = %+v", r)
	}
}

func TestFindResultReportsOtherFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	write(t, notDir, nil)
	if _, err := FindResult(notDir); err == nil || errors.Is(err, ErrNoResult) {
		t.Fatalf("FindResult under a file = %v, want a failure other than ErrNoResult", err)
	}
}

func write(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
