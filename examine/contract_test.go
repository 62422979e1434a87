package examine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/refusal"
)

const goodContract = `# REQUEST
Greet the visitor by name.

# ACCEPTANCE CRITERIA
E1. greet NAME prints a greeting
  CHECK: ./greet Ada
  EXPECT: Hello, Ada.
  EVIDENCE:
E3. greet without a name exits 2

# FILE SCOPE
greet
docs/**.md

ABANDON: E3 needs a terminal we do not have
`

func TestAContractParses(t *testing.T) {
	c, err := examine.ParseContract("c.md", []byte(goodContract))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.IDs(); len(got) != 2 || got[0] != "E1" || got[1] != "E3" {
		t.Fatalf("ids = %v", got)
	}
	if o := c.Criteria[0].Oracle; o == nil || o.Check != "./greet Ada" || o.Expect != "Hello, Ada." {
		t.Fatalf("oracle = %+v", o)
	}
	if c.Criteria[1].Oracle != nil || c.Abandoned["E3"] != "needs a terminal we do not have" {
		t.Fatalf("criteria = %+v abandoned = %v", c.Criteria, c.Abandoned)
	}
	if strings.Join(c.FileScope, ",") != "greet,docs/**.md" || c.Request != "Greet the visitor by name." {
		t.Fatalf("scope = %v request = %q", c.FileScope, c.Request)
	}
}

func TestAMalformedContractIsRefusedNamingTheLine(t *testing.T) {
	head := "# REQUEST\nx\n# ACCEPTANCE CRITERIA\n"
	cases := []struct{ name, src, want string }{
		{"duplicate E ID", head + "E1. a\nE1. b\n", "c.md:5: duplicate criterion E1"},
		{"criterion without text", head + "E1.\n", "c.md:4: criterion E1 has no text"},
		{"attribute not indented", head + "E1. a\nCHECK: true\n", "c.md:5: attribute \"CHECK: true\" must be indented"},
		{"attribute before any criterion", head + "  CHECK: true\n", "c.md:4: attribute CHECK: is not under a criterion"},
		{"unknown attribute", head + "E1. a\n  RUN: true\n", "c.md:5: unknown attribute RUN:"},
		{"duplicate attribute", head + "E1. a\n  CHECK: a\n  CHECK: b\n  EXPECT: x\n", "c.md:6: E1 has a second CHECK:"},
		{"CHECK without EXPECT", head + "E1. a\n  CHECK: true\n", "c.md:5: E1 has CHECK: but no EXPECT:"},
		{"EXPECT without CHECK", head + "E1. a\n  EXPECT: ok\n", "c.md:5: E1 has EXPECT: but no CHECK:"},
		{"unknown section", head + "E1. a\n# NOTES\n", "c.md:5: unknown section \"NOTES\""},
		{"missing criteria section", "# REQUEST\nx\n", "section \"ACCEPTANCE CRITERIA\" is missing"},
		{"text before any section", "hello\n# REQUEST\n", "c.md:1: text before the first section"},
		{"abandon of an unknown criterion", head + "E1. a\nABANDON: E9 gone\n", "ABANDON names E9"},
		{"free text among criteria", head + "E1. a\nsome prose\n", "c.md:5: expected a criterion"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := examine.ParseContract("c.md", []byte(c.src))
			if !refusal.Named(err, "ConfigurationMalformed") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ConfigurationMalformed containing %q", err, c.want)
			}
		})
	}
}

func TestTheOutcomeFollowsTheVerdicts(t *testing.T) {
	m, u, n := examine.Met, examine.Unmet, examine.NotExamined
	cases := []struct {
		v    []examine.Verdict
		want examine.Outcome
	}{
		{[]examine.Verdict{m, m}, examine.Accepted},
		{[]examine.Verdict{m, n}, examine.Indeterminate},
		{[]examine.Verdict{n, u, m}, examine.Rejected},
		{[]examine.Verdict{u}, examine.Rejected},
	}
	for _, c := range cases {
		if got := examine.DeriveOutcome(c.v); got != c.want {
			t.Errorf("%v: %s, want %s", c.v, got, c.want)
		}
	}
}

func TestAFenceIsLongerThanAnyBacktickRunInside(t *testing.T) {
	for text, want := range map[string]string{"plain": "```", "a ``` b": "````", "`````": "``````", "``": "```"} {
		if got := examine.Fence([]byte(text)); got != want {
			t.Errorf("Fence(%q) = %q, want %q", text, got, want)
		}
	}
}

func FuzzParseContract(f *testing.F) {
	f.Add([]byte(goodContract))
	f.Add([]byte("# REQUEST\n# ACCEPTANCE CRITERIA\nE1. x\n  CHECK: y\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := examine.ParseContract("f.md", src)
		if err == nil {
			for _, cr := range c.Criteria {
				if cr.Text == "" || (cr.Oracle != nil && (cr.Oracle.Check == "" || cr.Oracle.Expect == "")) {
					t.Fatalf("accepted a partial criterion %+v", cr)
				}
			}
		}
	})
}

func TestContractsAreBoundedAndParsedInLinearTime(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("# REQUEST\nr\n# ACCEPTANCE CRITERIA\n")
	for i := 1; i <= examine.MaxCriteria; i++ {
		fmt.Fprintf(&b, "E%d. c\n", i)
	}
	start := time.Now()
	if _, err := examine.ParseContract("f.md", []byte(b.String())); err != nil {
		t.Fatalf("a contract at the bound: %v", err)
	}
	fmt.Fprintf(&b, "E%d. one too many\n", examine.MaxCriteria+1)
	if _, err := examine.ParseContract("f.md", []byte(b.String())); !refusal.Named(err, "ContractTooLarge") {
		t.Fatalf("over the bound: %v", err)
	}
	huge := "# REQUEST\n" + strings.Repeat("x", examine.MaxContractBytes) + "\n# ACCEPTANCE CRITERIA\nE1. c\n"
	if _, err := examine.ParseContract("f.md", []byte(huge)); !refusal.Named(err, "ContractTooLarge") {
		t.Fatalf("over the byte bound: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("parsing took %v", d)
	}
}

func TestAContractThatIsNotUTF8IsRefusedNamingTheLine(t *testing.T) {
	t.Parallel()
	_, err := examine.ParseContract("f.md", []byte("# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. c\n  CHECK: echo \xff\n  EXPECT: \xff\n"))
	if !refusal.Named(err, "ConfigurationMalformed") || !strings.Contains(err.Error(), "f.md:5: the contract is not valid UTF-8") {
		t.Fatalf("err = %v", err)
	}
}
