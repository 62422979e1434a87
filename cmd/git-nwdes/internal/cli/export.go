package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	reports "github.com/nwdes/nwdes/report"
)

// exportOptions are export's flags.
type exportOptions struct {
	Commit string
	judgingOptions
	Format      reports.Format
	MaxBytes    int
	MaxBytesSet bool
}

func formatNames() []string {
	names := make([]string, len(reports.Formats))
	for i, f := range reports.Formats {
		names[i] = string(f)
	}
	return names
}

func (s *session) exportCmd() *cli.Command {
	names := formatNames()
	return &cli.Command{
		Name:      "export",
		Usage:     "write a commit's verdicts as JUnit XML, a Markdown summary or an in-toto statement",
		UsageText: "git nwdes export [--commit REV] [--against REF [--require-signed]] --format junit|markdown|intoto [--max-bytes N]",
		Description: `Forges show neither custom notes nor custom refs; these are how verdicts
reach reviewers. junit: one test case per expectation (met passes; unmet and
not_examined fail; a feature without an examination fails every expectation
of its contract). markdown: a table, then each feature folded in a
<details> holding its acceptance brief, fit for a CI job summary and a
pull-request comment: at most --max-bytes long (default 65536, GitHub's cap
on a comment; 0 for no bound), cut at whole rows and sections and ended by
a line naming what was left out. intoto: an in-toto Statement v1 about the commit whose
predicate (https://nwdes.dev/attestation/acceptance/v1) carries the briefs.
Written to stdout; exit 0 whatever the verdict (git nwdes status gates).
--against and --require-signed ask the judgment's question as status does,
so an export says what status says.

EXAMPLES
   git nwdes export --format junit > nwdes-junit.xml
   git nwdes export --format markdown >> "$GITHUB_STEP_SUMMARY"
   git nwdes export --format markdown --max-bytes 0 > nwdes-summary.md
   git nwdes export --commit v1.2.0 --format intoto > acceptance.intoto.json
` + exitStatus(),
		Flags: []cli.Flag{
			commitFlag(), againstFlag(),
			&cli.BoolFlag{Name: "require-signed", Usage: "refuse when no signing policy is in force at --against"},
			&cli.StringFlag{Name: "format", Usage: "`FORMAT`: " + strings.Join(names, ", "), Required: true},
			intFlag("max-bytes", fmt.Sprintf("bound a markdown export to `N` bytes (0: unbounded; at least %d)", reports.MinMaxBytes), reports.DefaultMaxBytes),
		},
		Action: func(c *cli.Context) error {
			o := exportOptions{Commit: c.String("commit"), judgingOptions: judgingFlags(c), Format: reports.Format(c.String("format")),
				MaxBytes: c.Int("max-bytes"), MaxBytesSet: c.IsSet("max-bytes")}
			return s.export(o)
		},
	}
}

func (s *session) export(o exportOptions) error {
	known := false
	for _, k := range reports.Formats {
		known = known || k == o.Format
	}
	if !known {
		return usagef("--format %q is not one of %s", o.Format, strings.Join(formatNames(), ", "))
	}
	ro := reports.Options{MaxBytes: o.MaxBytes}
	switch {
	case o.Format != reports.Markdown && o.MaxBytesSet:
		return usagef("--max-bytes bounds --format markdown only; %s is never cut", o.Format)
	case o.Format != reports.Markdown:
		ro.MaxBytes = 0
	case ro.MaxBytes < 0 || ro.MaxBytes > 0 && ro.MaxBytes < reports.MinMaxBytes:
		return usagef("--max-bytes %d: give 0 (unbounded) or at least %d", ro.MaxBytes, reports.MinMaxBytes)
	}
	rep, err := s.evaluate(statusOptions{Commit: o.Commit, judgingOptions: o.judgingOptions})
	if err != nil {
		return err
	}
	return reports.Export(s.env.Stdout, rep, o.Format, ro)
}
