# nwdes build. `make demo` and `make test` are the two commands a new user needs.
GO       ?= go
PREFIX   ?= $(HOME)/.local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man/man1
SHAREDIR ?= $(PREFIX)/share
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -X github.com/nwdes/nwdes/cmd/git-nwdes/internal/cli.version=$(VERSION) -X github.com/nwdes/nwdes/cmd/git-nwdes/internal/cli.commit=$(COMMIT)
BIN      := bin/git-nwdes

.PHONY: build install test check demo bench bench-goals fuzz fmt vet vet-cross clean

# CGO_ENABLED=0: a static binary starts faster, and every wall a gate runs
# starts this binary again as its helper. BUILDTAGS leaves out urfave/cli's
# man page renderer, whose markdown library initialises itself at every
# start; the man page is kept rendered in cmd/git-nwdes/internal/cli/git-nwdes.1.
BUILDTAGS := urfave_cli_no_docs
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(BUILDTAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/git-nwdes

# Installs git-nwdes into BINDIR (so `git nwdes` works when BINDIR is on PATH),
# its man page, since git turns `git nwdes --help` into `man git-nwdes`, and
# its completion scripts for bash, zsh and fish.
install: build
	install -d $(BINDIR) $(MANDIR)
	install -m 0755 $(BIN) $(BINDIR)/git-nwdes
	$(BIN) man > $(MANDIR)/git-nwdes.1
	install -d $(SHAREDIR)/bash-completion/completions $(SHAREDIR)/zsh/site-functions $(SHAREDIR)/fish/vendor_completions.d
	$(BIN) completion bash > $(SHAREDIR)/bash-completion/completions/git-nwdes
	$(BIN) completion zsh > $(SHAREDIR)/zsh/site-functions/_git-nwdes
	$(BIN) completion fish > $(SHAREDIR)/fish/vendor_completions.d/git-nwdes.fish
	@echo "completion: for 'git nwdes <TAB>' in bash, add to ~/.bashrc: source $(SHAREDIR)/bash-completion/completions/git-nwdes"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "note: add $(BINDIR) to PATH so that git finds git-nwdes";; esac

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# vet for the other platforms nwdes builds on: the wall is Linux's, and
# elsewhere every verb builds and runs, refusing what would run the
# candidate's code (SandboxUnavailable). Each platform type-checks the
# whole module and its dependencies again (about 2 CPU-minutes each with
# a cold build cache), so make test leaves it to make check and to CI.
vet-cross:
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=freebsd $(GO) vet ./...

# Every test: most under the race detector, then the few that gain nothing
# from it once without (scripts/test.sh says which and why), with a line at
# least every 30 s. Every fuzz target's seed corpus runs with its package;
# fuzzing proper is `make fuzz`, which CI runs after this.
test:
	@GO=$(GO) ./scripts/test.sh

# The inner loop: formatting, vet, and the tests without the race
# detector and without the longest stress runs (-short): about 4 minutes
# on 2 cores, most of it cmd/git-nwdes/internal/cli's scripts and the swarm; for one
# package, go test -short ./pkg/.
check: fmt vet vet-cross
	$(GO) test -short -count=1 ./...

demo: build
	./demo/run.sh $(BIN)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Every speed goal of docs/performance.md beside its twin, with a summary
# of the ratios (scripts/bench-goals.sh; FULL=1 adds the 10k fixtures).
bench-goals:
	@GO=$(GO) ./scripts/bench-goals.sh

# Every fuzz target for FUZZTIME each (make test runs their seed corpora,
# including every input a fuzzer ever found, on each run). New findings
# land in the package's testdata/fuzz and become seeds: commit them.
# Go 1.26's fuzz coordinator can fail a target with "context deadline
# exceeded" right at the -fuzztime deadline, having found nothing
# (golang/go#75804, fixed in Go 1.27): such a run, with no failing input
# written, is run once more; any other failure fails. Minimising a new
# input is bounded at 5 s (Go's default is 60 s): a target whose inputs
# are large stopped fuzzing for the rest of a 30 s run to minimise one.
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; \
	    for try in 1 2; do \
	      out=$$($(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg 2>&1); rc=$$?; \
	      echo "$$out"; \
	      [ $$rc -eq 0 ] && break; \
	      if [ $$try -eq 1 ] && echo "$$out" | grep -q 'context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
	        echo "== $$f: the fuzz coordinator's deadline race (golang/go#75804), no failing input: once more"; continue; \
	      fi; \
	      exit 1; \
	    done; \
	  done; \
	done

clean:
	rm -rf bin
