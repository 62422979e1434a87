#!/usr/bin/env bash
# make bench-goals: every speed goal of docs/performance.md, each benchmark
# run beside its twin in one invocation, then one summary line a goal with
# the ratio the goal is stated in. The raw output stays in $OUT (default
# bench-goals.txt) for the record.
#
# FULL=1 adds the large fixtures (fsck at 10,000 examinations, ledger
# verify at 10,000 entries): each takes minutes to build and to run.
set -uo pipefail
GO=${GO:-go}
OUT=${OUT:-bench-goals.txt}
: >"$OUT"

failed=0
run() { # package, -bench pattern, -benchtime
	echo "== $1 $2 ($3)"
	"$GO" test -run '^$' -bench "$2" -benchtime "$3" -timeout 60m "$1" 2>&1 | tee -a "$OUT" | grep -E '^Benchmark|^--- SKIP|FAIL|skip'
	# A benchmark that fails is a goal not measured: say so in the exit.
	if [ "${PIPESTATUS[0]}" -ne 0 ]; then
		echo "== FAILED: $1 $2 (its output is in $OUT)"
		failed=1
	fi
}

fsck='FsckExaminations/1000$|FsckDraft/1000$'
ledger='LedgerVerify/1000$'
if [ "${FULL:-}" = 1 ]; then
	fsck='FsckExaminations|FsckDraft'
	ledger='LedgerVerify$'
fi

{ uptime; git rev-parse --short HEAD 2>/dev/null; date -u; } | tee -a "$OUT"
run ./cmd/git-nwdes/ 'Start$' 200x
run ./cmd/git-nwdes/ 'WallCLI$|GateRun10$' 30x
run ./hooks/ 'PrePushHook$|PrePushHookCheckOnly$|PrePushHookSigned$|StatusJSON$|ExamineShow$' 50x
run ./hooks/ 'CheckInProcess$' 200x
run ./gitstore/ 'AppendOne$|AppendOneGitCLI$|AppendOneDurable$|DurableFloor$|AppendBatch100$|AppendBatch100FastImport$|ReadLatestLongHistory|NoteReadColdProcess' 1s
run ./examine/ "$fsck" 2x
run ./examine/ 'DraftAdd$' 300x
run ./ledger/ "$ledger" 3x
run ./swarm/ 'CardOverhead$' 30x

# The goals stated as a ratio of two benchmarks of gitstore.
awk '
/^Benchmark/ { n=$1; sub(/-[0-9]+$/, "", n); t[n]=$3 }
function pair(a, b, goal) {
	if ((a in t) && (b in t) && t[b] > 0) printf "%-60s %.2f  (goal %s)\n", a " / " b, t[a]/t[b], goal
}
END {
	print "== ratios of pairs"
	pair("BenchmarkAppendOne", "BenchmarkAppendOneGitCLI", "<= 0.2")
	pair("BenchmarkAppendOneDurable", "BenchmarkDurableFloor", "<= 2")
	pair("BenchmarkAppendBatch100", "BenchmarkAppendBatch100FastImport", "<= 1")
	pair("BenchmarkReadLatestLongHistory/warm", "BenchmarkReadLatestLongHistoryGitCLI", "< 1")
}' "$OUT" | tee -a "$OUT"
exit $failed
