# KIM Snatch. `make help` lists the targets.
#
# Everything the targets need is built from Go modules into bin/: the
# Kubernetes control plane (hack/tools/k8s), the tools of our own (the rule
# checker, the dashboard generator and the image builder of hack/tools, the
# descheduler policy checker of hack/tools/descheduler-policy), the linters,
# the release tools, and the neighbours a Kyma runtime runs beside KIM Snatch
# (hack/tools/README.md lists the modules). Only Go 1.26
# must be installed: every go command below runs the toolchain that go.mod
# names, which the go command fetches from the module proxy on first use.
# shellcheck and jq, which are not Go modules, make installs from Debian's
# packages at pinned versions (hack/build/debian-package.sh).

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

K8S_VERSION     ?= v1.36.3
# The one toolchain of what this repository builds, tests and releases, and
# of the release tools: go.mod's toolchain line (docs/releasing.md, "The
# toolchain"). Exported so that it wins over GOTOOLCHAIN=local, which Go's
# own go.env may set. The other projects' components that the tests run
# beside KIM Snatch (the control plane, the neighbours, the linters) are
# built as their projects build them, with the Go the environment chooses:
# THIRD_PARTY_GO.
HOST_GOTOOLCHAIN := $(GOTOOLCHAIN)
GO_TOOLCHAIN    := $(shell sed -n 's/^toolchain //p' go.mod)
export GOTOOLCHAIN := $(GO_TOOLCHAIN)
THIRD_PARTY_GO  := GOTOOLCHAIN='$(HOST_GOTOOLCHAIN)' GOWORK=off go
BIN             := $(CURDIR)/bin
K8S_BIN         := $(BIN)/k8s-$(K8S_VERSION)
K8S_STAMP       := $(K8S_BIN)/.built
K8S_COMPONENTS  := kube-apiserver kube-scheduler kube-controller-manager kubectl kubelet kube-proxy
PROMRULES       := $(BIN)/promrules
DESCHEDULER_POLICY := $(BIN)/descheduler-policy
DASHBOARDS      := $(BIN)/dashboards
GOLANGCI_LINT   := $(BIN)/golangci-lint
ACTIONLINT      := $(BIN)/actionlint
# shellcheck is not a Go module: make installs it from Debian's packages at
# this version (hack/build/debian-package.sh), and the stamp, named after the
# version, makes that a no-op until the pin moves.
SHELLCHECK_VERSION := 0.9.0-1
SHELLCHECK      := /usr/bin/shellcheck
SHELLCHECK_STAMP := $(BIN)/.shellcheck-$(SHELLCHECK_VERSION)
# jq, the same way: test/docs and the full tier of the node run the
# documented Fix that merges KIM Snatch's flags into kube-state-metrics'
# arguments, a jq program.
JQ_VERSION      := 1.6-2.1+deb12u3
JQ              := /usr/bin/jq
JQ_STAMP        := $(BIN)/.jq-$(JQ_VERSION)
GOVULNCHECK     := $(BIN)/govulncheck
COSIGN          := $(BIN)/cosign
CYCLONEDX_GOMOD := $(BIN)/cyclonedx-gomod
NETPOL          := $(BIN)/kube-network-policies
# The neighbours, each built unmodified from its module in hack/tools,
# and their CRDs, copied from their modules.
NEIGHBOURS      := $(BIN)/neighbours
CERTMGMT        := $(NEIGHBOURS)/cert-controller-manager
PROMETHEUS      := $(NEIGHBOURS)/prometheus
PROM_OPERATOR   := $(NEIGHBOURS)/operator
PROM_RELOADER   := $(NEIGHBOURS)/prometheus-config-reloader
ALERTMANAGER    := $(NEIGHBOURS)/alertmanager
COREDNS         := $(NEIGHBOURS)/coredns
NEIGHBOUR_CRDS  := $(NEIGHBOURS)/crds/.copied
# Toxiproxy, unmodified, for the platform-fault scenarios of test/e2e.
TOXIPROXY       := $(BIN)/toxiproxy-server

# Each binary has its own version and image, so one can be released without
# the other.
WEBHOOK_VERSION ?= dev
SYNCER_VERSION  ?= dev
IMG_WEBHOOK     ?= snatch-webhook:$(WEBHOOK_VERSION)
IMG_SYNCER      ?= cabundle-syncer:$(SYNCER_VERSION)

# Long enough for the end-to-end package, which waits for each break's
# alerts to fire in Prometheus.
GO_TEST_FLAGS   ?= -timeout 80m
# The packages that run a real node: one node runs on a host at a time, so
# make test runs them one after another. The others run meanwhile, one
# package at a time: the node's packages mostly wait on the kubelet.
NODE_PKGS       := ./test/e2e ./test/e2e/migration ./test/e2e/cmd/snatch-local ./test/realnode
# The node packages' scenarios are in two tiers (docs/development.md, "Two
# tiers"): make test runs the smoke tier, make e2e both.
# $(call NODE_TEST,tier,with-node flags,go test flags,wrapper)
NODE_TEST       = SNATCH_TIER=$(1) hack/e2e/with-node.sh $(2) $(4) go test -p 1 $(GO_TEST_FLAGS) -count=1 $(3) $(NODE_PKGS)
# What make e2e, make test-cost and make chaos run on the node: the full
# tier's faults need Toxiproxy, which the smoke tier does not, and its
# runbook of kube-state-metrics' labels jq.
E2E_DEPS        = $(K8S_STAMP) $(PROMRULES) $(DASHBOARDS) $(NETPOL) $(NEIGHBOUR_CRDS) $(TOXIPROXY) $(JQ_STAMP) images monitoring-images
FUZZ_TIME       ?= 10s

K8S_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(K8S_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitTreeState=clean

export SNATCH_K8S_BIN := $(K8S_BIN)
export SNATCH_PROMRULES := $(PROMRULES)
export SNATCH_DESCHEDULER_POLICY := $(DESCHEDULER_POLICY)
export SNATCH_DASHBOARDS := $(DASHBOARDS)
export SNATCH_NEIGHBOURS := $(NEIGHBOURS)
export SNATCH_COSIGN := $(COSIGN)
export SNATCH_CYCLONEDX_GOMOD := $(CYCLONEDX_GOMOD)
export SNATCH_TOXIPROXY := $(TOXIPROXY)
export SNATCH_JQ := $(JQ)

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: build
build: ## Build snatch-webhook and cabundle-syncer into bin/, as the images do.
	VERSION=$(WEBHOOK_VERSION) hack/build/build-binary.sh snatch-webhook $(BIN)
	VERSION=$(SYNCER_VERSION) hack/build/build-binary.sh cabundle-syncer $(BIN)

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) $(ACTIONLINT) shellcheck ## Run golangci-lint, shellcheck on the shell scripts, and actionlint, with shellcheck, on .github/workflows (installed on first use).
	$(GOLANGCI_LINT) run ./...
	$(ACTIONLINT) -shellcheck=$(SHELLCHECK) .github/workflows/*.yml

# The shell scripts are the repository's files whose first line is a sh or
# bash shebang, whatever their names (hack/*/*.sh, .ci/run).
.PHONY: shellcheck
shellcheck: $(SHELLCHECK_STAMP) ## Run shellcheck on every shell script of the repository (part of make lint and make test).
	@scripts=$$(git ls-files -z --cached --others --exclude-standard | xargs -0 awk 'FNR == 1 { if (/^#!.*[\/ ](ba)?sh( |$$)/) print FILENAME; nextfile }'); \
	echo ">> shellcheck $$(echo $$scripts)"; \
	$(SHELLCHECK) $$scripts

.PHONY: manifests
manifests: $(K8S_STAMP) ## Render the kustomize bases into bin/manifests/.
	mkdir -p $(BIN)/manifests
	for base in webhook syncer default; do \
		$(K8S_BIN)/kubectl kustomize deploy/$$base > $(BIN)/manifests/$$base.yaml; \
		echo "rendered deploy/$$base -> bin/manifests/$$base.yaml"; \
	done

.PHONY: dashboards
dashboards: $(DASHBOARDS) ## Regenerate the Grafana dashboards in deploy/components/dashboards, the fleet records of deploy/components/fleet, the fleet alerts of deploy/components/fleet-alerts and the inhibition rules of deploy/components/alertmanager from hack/tools/dashboards.
	$(DASHBOARDS) generate -o deploy/components/dashboards
	$(DASHBOARDS) fleet-rules > deploy/components/fleet/prometheusrule.yaml
	$(DASHBOARDS) fleet-alerts > deploy/components/fleet-alerts/prometheusrule.yaml
	$(DASHBOARDS) inhibit-rules > deploy/components/alertmanager/inhibit-rules.yaml
	$(DASHBOARDS) alertmanager-config > deploy/components/alertmanager/alertmanagerconfig.yaml

##@ Tests

.PHONY: test
test: $(K8S_STAMP) $(PROMRULES) $(DESCHEDULER_POLICY) $(DASHBOARDS) $(NETPOL) $(NEIGHBOUR_CRDS) $(COSIGN) $(CYCLONEDX_GOMOD) $(SHELLCHECK_STAMP) $(JQ_STAMP) images monitoring-images ## The presubmit tier: the vulnerability check, shellcheck, unit, integration against a real control plane, the node's smoke tier, fuzz smoke.
	$(call NODE_TEST,smoke) & node=$$!; \
	nice -n 19 $(MAKE) --no-print-directory test-checks & checks=$$!; \
	rest=0; go test -p 1 $(GO_TEST_FLAGS) $$(go list ./... | grep -vxF "$$(go list $(NODE_PKGS))") || rest=$$?; \
	failed=; wait $$node || failed="$$failed the node's smoke tier;"; \
	wait $$checks || failed="$$failed make test-checks;"; \
	[ $$rest -eq 0 ] || failed="$$failed the packages without a node;"; \
	[ -z "$$failed" ] || { echo "make test failed:$$failed" >&2; exit 1; }

# make test runs three lanes at once: the node's smoke tier, the packages
# without a node, and test-checks, which only builds and fuzzes and so runs
# at nice 19: it takes the cores the other lanes leave idle, and the
# node's scenarios hold under such a load (docs/benchmarks.md, "What the
# suite costs"). make test installs shellcheck and jq before the lanes
# start, so that their apt-get never waits on the node's
# (hack/e2e/node-prerequisites.sh).
.PHONY: test-checks
test-checks: vuln shellcheck ## The vulnerability check, shellcheck, the tests of the tools of our own in hack/tools and the fuzz smoke (part of make test).
	GOWORK=off go -C hack/tools test ./...
	go test ./pkg/affinity -run '^$$' -fuzz '^FuzzMutate$$' -fuzztime $(FUZZ_TIME)
	go test ./pkg/admission -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_TIME)

# make vuln builds both binaries as a release does, for every platform the
# release ships (hack/release/release.sh --platforms), and runs govulncheck on them,
# offline, against the database of the golang.org/x/vulndb version that
# hack/tools/vulndb/go.mod pins (downloaded once through the module proxy and
# checked against go.sum). It fails on a vulnerability whose code a binary
# contains, in the standard library or a module; one only in a package it
# imports is listed but does not fail (docs/releasing.md, "Vulnerabilities").
VULN_BIN        := $(BIN)/vuln

.PHONY: vuln
vuln: $(GOVULNCHECK) ## Check both binaries, for each released platform, for known vulnerabilities they reach, offline, against the pinned database (hack/tools/vulndb).
	GOWORK=off go -C hack/tools/vulndb mod download golang.org/x/vulndb
	db=$$(GOWORK=off go -C hack/tools/vulndb list -m -f '{{.Dir}}' golang.org/x/vulndb)/data/osv; \
	echo ">> vulnerability database: golang.org/x/vulndb@$$(GOWORK=off go -C hack/tools/vulndb list -m -f '{{.Version}}' golang.org/x/vulndb)"; \
	rc=0; for b in snatch-webhook cabundle-syncer; do \
		case $$b in snatch-webhook) v=$(WEBHOOK_VERSION) ;; *) v=$(SYNCER_VERSION) ;; esac; \
		for p in $$(hack/release/release.sh --platforms $$b); do \
			dir=$(VULN_BIN)/$${p%/*}-$${p#*/}; mkdir -p $$dir; \
			GOOS=$${p%/*} GOARCH=$${p#*/} VERSION=$$v hack/build/build-binary.sh $$b $$dir || exit 1; \
			echo ">> govulncheck $$b $$p ($$(go version $$dir/$$b | cut -d' ' -f2))"; \
			$(GOVULNCHECK) -db "file://$$db" -mode binary $$dir/$$b || rc=$$?; \
		done; \
	done; \
	[ $$rc -eq 0 ] || { echo "make vuln: a binary reaches a known vulnerability (above); docs/releasing.md, \"Vulnerabilities\"" >&2; exit 1; }

.PHONY: e2e
e2e: $(E2E_DEPS) ## The full tier: every scenario of the node packages, the smoke tier's included (root, Debian).
	$(call NODE_TEST,full,--require,-v)

# make test-cost runs the node packages' tier TIER (full, or smoke) under
# test/cost, which measures each top-level test's wall time, waiting and
# CPU-seconds, and each long-running process's CPU-seconds
# (docs/benchmarks.md, "What the suite costs"). The report goes to
# bin/cost/<tier>.md and .json.
TIER ?= full

.PHONY: test-cost
test-cost: $(E2E_DEPS) ## Measure what each node test and each process of its stack costs: TIER=full (default) or smoke.
	hack/build/build-binary.sh test/cost/cmd/test-cost $(BIN)
	$(call NODE_TEST,$(TIER),--require,-json,$(BIN)/test-cost -json $(BIN)/cost/$(TIER).json -md $(BIN)/cost/$(TIER).md --)

# make test and make e2e run the platform-fault scenarios of their tiers
# (test/e2e/faults_scenarios_test.go); make chaos runs each scenario under
# both loads (docs/benchmarks.md, "Faults of the platform").
.PHONY: chaos
chaos: $(E2E_DEPS) ## The platform-fault scenarios on the real node, each during a CA rotation and under steady load (root, Debian).
	SNATCH_FAULTS=all hack/e2e/with-node.sh --require go test $(GO_TEST_FLAGS) -count=1 -v -timeout 90m -run '^TestPlatformFaultsBreakNoInvariant$$' ./test/e2e

.PHONY: e2e-kind
e2e-kind: $(K8S_STAMP) $(NEIGHBOUR_CRDS) images ## The same suite on kind with the images and deploy/ (needs a Docker engine).
	KUBECTL=$(K8S_BIN)/kubectl WEBHOOK_VERSION=$(WEBHOOK_VERSION) SYNCER_VERSION=$(SYNCER_VERSION) hack/e2e/e2e-kind.sh

.PHONY: run
run: $(K8S_STAMP) $(NETPOL) $(NEIGHBOUR_CRDS) images ## Install both binaries from deploy/ on a real node beside a local multi-pool cluster until Ctrl-C, with a Kyma and a customer Deployment (root, Debian).
	hack/build/build-binary.sh test/e2e/cmd/snatch-local $(BIN)
	hack/e2e/with-node.sh --require $(BIN)/snatch-local

.PHONY: bench
bench: $(K8S_STAMP) ## Benchmarks against same-run baselines: table to stdout, JSON to bin/bench/results.json (BENCH_FLAGS=-smoke for a quick run).
	hack/build/build-binary.sh test/bench/cmd/snatch-bench $(BIN)
	$(BIN)/snatch-bench -out $(BIN)/bench/results.json $(BENCH_FLAGS)

##@ Images

# make images writes the images as docker archives (`docker save` format)
# into bin/images/ without a Docker engine: hack/build/build-binary.sh builds each
# binary as the Dockerfile's builder stage does, and imagetool packs it with
# the user, entrypoint, labels and path of the Dockerfile's final stage, but
# without the distroless base. The tag is the one test/e2e/overlay uses.
# The test images' binaries are built by the same script, into
# bin/images/build/. The pause image serves as containerd's sandbox image
# where nothing can be pulled; like registry.k8s.io/pause it runs as 65535.
# kim-snatch is the stand-in of the old single binary (test/e2e/kimsnatch),
# run as /manager for the migration scenario. The probe image is the client
# of the NetworkPolicy tests on the real node, which also run its binary,
# bin/images/build/probe, on the host.
IMAGES          := $(BIN)/images
IMAGETOOL       := $(BIN)/imagetool
IMAGES_TAG      := e2e
IMG_PAUSE       := kim-snatch-pause:$(IMAGES_TAG)
IMG_PROBE       := kim-snatch-probe:$(IMAGES_TAG)

.PHONY: images
images: $(IMAGETOOL) $(CERTMGMT) $(COREDNS) ## Write the images snatch-webhook, cabundle-syncer, kim-snatch-pause, kim-snatch, kim-snatch-probe, cert-controller-manager and coredns (tag e2e) as docker archives into bin/images/, without Docker.
	@mkdir -p $(IMAGES)/build
	VERSION=$(WEBHOOK_VERSION) hack/build/build-binary.sh snatch-webhook $(IMAGES)/build
	$(IMAGETOOL) -dockerfile Dockerfile.webhook -build-arg VERSION=$(WEBHOOK_VERSION) \
		-binary $(IMAGES)/build/snatch-webhook -tag snatch-webhook:$(IMAGES_TAG) -o $(IMAGES)/snatch-webhook.tar
	VERSION=$(SYNCER_VERSION) hack/build/build-binary.sh cabundle-syncer $(IMAGES)/build
	$(IMAGETOOL) -dockerfile Dockerfile.syncer -build-arg VERSION=$(SYNCER_VERSION) \
		-binary $(IMAGES)/build/cabundle-syncer -tag cabundle-syncer:$(IMAGES_TAG) -o $(IMAGES)/cabundle-syncer.tar
	hack/build/build-binary.sh hack/tools/imagetool/pause $(IMAGES)/build
	$(IMAGETOOL) -binary $(IMAGES)/build/pause -entrypoint /pause -user 65535:65535 \
		-tag $(IMG_PAUSE) -o $(IMAGES)/pause.tar
	hack/build/build-binary.sh test/e2e/kimsnatch/cmd/kim-snatch $(IMAGES)/build
	$(IMAGETOOL) -binary $(IMAGES)/build/kim-snatch -entrypoint /manager -user 65532:65532 \
		-tag kim-snatch:$(IMAGES_TAG) -o $(IMAGES)/kim-snatch.tar
	hack/build/build-binary.sh hack/tools/imagetool/probe $(IMAGES)/build
	$(IMAGETOOL) -binary $(IMAGES)/build/probe -entrypoint /probe -user 65532:65532 \
		-tag $(IMG_PROBE) -o $(IMAGES)/probe.tar
	$(IMAGETOOL) -binary $(CERTMGMT) -entrypoint /cert-controller-manager -user 65532:65532 \
		-tag cert-controller-manager:$(IMAGES_TAG) -o $(IMAGES)/cert-controller-manager.tar
	$(IMAGETOOL) -binary $(COREDNS) -entrypoint /coredns -user 65534:65534 \
		-tag coredns:$(IMAGES_TAG) -o $(IMAGES)/coredns.tar

.PHONY: monitoring-images
monitoring-images: $(IMAGETOOL) $(PROMETHEUS) $(PROM_OPERATOR) $(ALERTMANAGER) ## Write the images of the end-to-end suite's Prometheus stack (Prometheus, prometheus-operator, its config-reloader, Alertmanager, the kube-state-metrics stand-in) into bin/images/.
	@mkdir -p $(IMAGES)/build
	# prometheus-operator passes Prometheus, Alertmanager and the reloader
	# arguments only, or names the reloader's command: each binary sits
	# where the upstream images put it.
	$(IMAGETOOL) -binary $(PROMETHEUS) -entrypoint /bin/prometheus -user 65534:65534 \
		-tag prometheus:$(IMAGES_TAG) -o $(IMAGES)/prometheus.tar
	$(IMAGETOOL) -binary $(PROM_RELOADER) -entrypoint /bin/prometheus-config-reloader -user 65534:65534 \
		-tag prometheus-config-reloader:$(IMAGES_TAG) -o $(IMAGES)/prometheus-config-reloader.tar
	$(IMAGETOOL) -binary $(PROM_OPERATOR) -entrypoint /bin/operator -user 65534:65534 \
		-tag prometheus-operator:$(IMAGES_TAG) -o $(IMAGES)/prometheus-operator.tar
	$(IMAGETOOL) -binary $(ALERTMANAGER) -entrypoint /bin/alertmanager -user 65534:65534 \
		-tag alertmanager:$(IMAGES_TAG) -o $(IMAGES)/alertmanager.tar
	hack/build/build-binary.sh test/e2e/kubestatemetrics/cmd/kube-state-metrics $(IMAGES)/build
	$(IMAGETOOL) -binary $(IMAGES)/build/kube-state-metrics -entrypoint /kube-state-metrics -user 65534:65534 \
		-tag kube-state-metrics:$(IMAGES_TAG) -o $(IMAGES)/kube-state-metrics.tar

.PHONY: docker-build
docker-build: ## Build both images (needs a Docker engine).
	VERSION=$(WEBHOOK_VERSION) IMG_WEBHOOK=$(IMG_WEBHOOK) hack/build/docker-build.sh webhook
	VERSION=$(SYNCER_VERSION) IMG_SYNCER=$(IMG_SYNCER) hack/build/docker-build.sh syncer

##@ Release

# KUBECTL renders the manifests (install.yaml, and snatch-webhook's
# migration.yaml); set it to use a kubectl other than bin/'s, which is then
# not built.
KUBECTL ?= $(K8S_BIN)/kubectl

.PHONY: release
release: $(if $(filter $(K8S_BIN)/kubectl,$(KUBECTL)),$(K8S_STAMP)) $(COSIGN) $(CYCLONEDX_GOMOD) ## Release one binary: make release BINARY=snatch-webhook VERSION=v0.1.0 COSIGN_KEY=<key> [DIGEST=sha256:...] [REVISION=<commit>] [PUSH=1]; or the module of two binary releases: make release MODULE=2.0.0 WEBHOOK_VERSION=v0.1.0 SYNCER_VERSION=v0.1.0 COSIGN_KEY=<key>, a bridge version with MODULE=2.0.0-bridge-<1..5> KIM_SNATCH_MANIFEST=<kim-snatch.yaml> (docs/releasing.md).
ifneq ($(MODULE),)
	@test -n "$(WEBHOOK_VERSION)" -a -n "$(SYNCER_VERSION)" || { echo "usage: make release MODULE=<X.Y.Z>[-bridge-<1..5>] WEBHOOK_VERSION=<vX.Y.Z> SYNCER_VERSION=<vX.Y.Z> COSIGN_KEY=<key> [KIM_SNATCH_MANIFEST=<kim-snatch.yaml>]"; exit 2; }
	KUBECTL=$(KUBECTL) COSIGN=$(COSIGN) COSIGN_KEY=$(COSIGN_KEY) KIM_SNATCH_MANIFEST=$(KIM_SNATCH_MANIFEST) \
		hack/release/release.sh --module $(MODULE) $(WEBHOOK_VERSION) $(SYNCER_VERSION)
else
	@test -n "$(BINARY)" -a -n "$(VERSION)" || { echo "usage: make release BINARY=<snatch-webhook|cabundle-syncer> VERSION=<vX.Y.Z> COSIGN_KEY=<key>"; exit 2; }
	KUBECTL=$(KUBECTL) DIGEST=$(DIGEST) REVISION=$(REVISION) PUSH=$(PUSH) RELEASE_TAG_AT_HEAD=$(RELEASE_TAG_AT_HEAD) \
		COSIGN=$(COSIGN) CYCLONEDX_GOMOD=$(CYCLONEDX_GOMOD) COSIGN_KEY=$(COSIGN_KEY) \
		hack/release/release.sh $(BINARY) $(VERSION)
endif

##@ Tools

.PHONY: tools
tools: $(K8S_STAMP) $(PROMRULES) $(DESCHEDULER_POLICY) $(DASHBOARDS) $(IMAGETOOL) $(GOLANGCI_LINT) $(ACTIONLINT) $(SHELLCHECK_STAMP) $(JQ_STAMP) $(GOVULNCHECK) $(COSIGN) $(CYCLONEDX_GOMOD) $(NETPOL) $(CERTMGMT) $(COREDNS) $(PROMETHEUS) $(PROM_OPERATOR) $(ALERTMANAGER) $(NEIGHBOUR_CRDS) ## Build the control plane, rule checker, descheduler policy checker, dashboard generator, image builder, linters, kube-network-policies and the neighbours into bin/.

# The control plane is rebuilt only when its module changes. The first build
# compiles Kubernetes and takes several minutes on two cores.
$(K8S_STAMP): hack/tools/k8s/go.mod hack/tools/k8s/go.sum hack/tools/k8s/etcd/main.go
	@mkdir -p $(K8S_BIN)
	@echo ">> building the Kubernetes $(K8S_VERSION) control plane into $(K8S_BIN) (first time: about 10 minutes)"
	@echo ">> [1/7] etcd"
	cd hack/tools/k8s && $(THIRD_PARTY_GO) build -trimpath -ldflags '-s -w' -o $(K8S_BIN)/etcd ./etcd
	@i=2; for c in $(K8S_COMPONENTS); do \
		echo ">> [$$i/7] $$c"; \
		(cd hack/tools/k8s && $(THIRD_PARTY_GO) build -trimpath -ldflags '$(K8S_LDFLAGS)' -o $(K8S_BIN)/$$c k8s.io/kubernetes/cmd/$$c); \
		i=$$((i+1)); \
	done
	$(K8S_BIN)/kube-apiserver --version
	@touch $@

# Each tool is one call of go_tool, or of debian_package for the two that
# are not Go modules.
#
# $(call go_tool,<binary>,<module>,<what>,<go>,<go build flags>) builds
# <binary> from the module in the folder <module>, again whenever its
# go.mod or go.sum changes. <what> is either a folder of our own code,
# which hack/build/build-binary.sh builds (again also when its sources or the
# script change), or the packages of another project, which the module's
# tool directives pin (hack/tools/README.md) and <go> builds with -trimpath
# and <go build flags>, into <binary>'s folder when there are several. The
# flags may not hold a comma: pass a variable, as $$(VAR).
define go_tool
$(1): $(2)/go.mod $(2)/go.sum $(if $(filter hack/%,$(3)),hack/build/build-binary.sh $$(wildcard $(3)/*.go $(3)/*.tmpl))
	@echo ">> building $(if $(word 2,$(3)),$(notdir $(3)),$(notdir $(1)))"
	$(if $(filter hack/%,$(3)),hack/build/build-binary.sh $(3) $$(@D),$(4) -C $(2) build -trimpath$(if $(5), $(5)) -o $(if $(word 2,$(3)),$$(@D)/,$$@) $(3))
endef

# $(call debian_package,<stamp>,<package>,<version>) installs <package>
# at <version> from Debian's packages (hack/build/debian-package.sh); the stamp,
# named after the version, makes that a no-op until the pin moves.
define debian_package
$(1): hack/build/debian-package.sh
	hack/build/debian-package.sh $(2) $(3)
	@mkdir -p $$(@D)
	@touch $$@
endef

# Our own: the rule checker, the dashboard generator, the descheduler
# policy checker and the image builder.
$(eval $(call go_tool,$(PROMRULES),hack/tools,hack/tools/promrules))
$(eval $(call go_tool,$(DASHBOARDS),hack/tools,hack/tools/dashboards))
$(eval $(call go_tool,$(DESCHEDULER_POLICY),hack/tools/descheduler-policy,hack/tools/descheduler-policy))
$(eval $(call go_tool,$(IMAGETOOL),hack/tools,hack/tools/imagetool))

# The linters, built as their projects build them.
$(eval $(call go_tool,$(GOLANGCI_LINT),hack/tools/lint,github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(THIRD_PARTY_GO)))
$(eval $(call go_tool,$(ACTIONLINT),hack/tools/descheduler-policy,github.com/rhysd/actionlint/cmd/actionlint,$(THIRD_PARTY_GO)))
$(eval $(call debian_package,$(SHELLCHECK_STAMP),shellcheck,$(SHELLCHECK_VERSION)))
$(eval $(call debian_package,$(JQ_STAMP),jq,$(JQ_VERSION)))

# The release tools, with go.mod's toolchain: govulncheck for make vuln;
# cosign, which signs the release's binaries and image digests
# (hack/release/release.sh), and whose first build takes several minutes on two
# cores; cyclonedx-gomod, which writes their SBOMs.
$(eval $(call go_tool,$(GOVULNCHECK),hack/tools,golang.org/x/vuln/cmd/govulncheck,GOWORK=off go))
$(eval $(call go_tool,$(COSIGN),hack/tools/descheduler-policy,github.com/sigstore/cosign/v2/cmd/cosign,GOWORK=off go))
$(eval $(call go_tool,$(CYCLONEDX_GOMOD),hack/tools/descheduler-policy,github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod,GOWORK=off go))

# kube-network-policies, unmodified, enforces NetworkPolicies on the real
# node of test/realnode.
$(eval $(call go_tool,$(NETPOL),hack/tools/netpol,sigs.k8s.io/kube-network-policies/cmd,$(THIRD_PARTY_GO)))

# The neighbours, unmodified, static and stripped for their images:
# Gardener cert-management (test/e2e/neighbours/cert-management), CoreDNS,
# and Prometheus, prometheus-operator with its config-reloader, and
# Alertmanager, as kube-prometheus runs them (test/e2e/neighbours/monitoring).
# The web UIs are not in the modules; the HTTP APIs are all the suite
# reads. Prometheus's and Alertmanager's versions are stamped as upstream's
# builds stamp them. Prometheus's first build takes several minutes. And
# Toxiproxy, for the platform-fault scenarios of test/e2e.
NEIGHBOUR_GO      := CGO_ENABLED=0 $(THIRD_PARTY_GO)
PROMETHEUS_FLAGS   = -ldflags '-s -w -X github.com/prometheus/common/version.Version=$(call modversion,hack/tools,github.com/prometheus/prometheus)'
ALERTMANAGER_FLAGS = -ldflags '-s -w -X github.com/prometheus/common/version.Version=$(call modversion,hack/tools/alertmanager,github.com/prometheus/alertmanager)'
$(eval $(call go_tool,$(CERTMGMT),hack/tools/certmgmt,github.com/gardener/cert-management/cmd/cert-controller-manager,$(NEIGHBOUR_GO),-ldflags '-s -w'))
$(eval $(call go_tool,$(COREDNS),hack/tools/coredns,github.com/coredns/coredns,$(NEIGHBOUR_GO),-ldflags '-s -w'))
$(eval $(call go_tool,$(PROMETHEUS),hack/tools,github.com/prometheus/prometheus/cmd/prometheus,$(NEIGHBOUR_GO),$$(PROMETHEUS_FLAGS)))
$(eval $(call go_tool,$(PROM_OPERATOR),hack/tools/promoperator,github.com/prometheus-operator/prometheus-operator/cmd/operator github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader,$(NEIGHBOUR_GO),-ldflags '-s -w'))
$(PROM_RELOADER): $(PROM_OPERATOR)
$(eval $(call go_tool,$(ALERTMANAGER),hack/tools/alertmanager,github.com/prometheus/alertmanager/cmd/alertmanager,$(NEIGHBOUR_GO),$$(ALERTMANAGER_FLAGS)))
$(eval $(call go_tool,$(TOXIPROXY),hack/tools/toxiproxy,github.com/Shopify/toxiproxy/v2/cmd/server,$(NEIGHBOUR_GO),-ldflags '-s -w'))

# modversion is the version of module $(2) that the module in $(1) requires,
# without its v: Prometheus's module v0.316.0 is Prometheus 3.16.0.
modversion = $(shell GOWORK=off go -C $(1) list -m -f '{{.Version}}' $(2) | sed -E 's/^v0\.([0-9]+)([0-9]{2})\.([0-9]+)$$/v\1.\2.\3/; s/^v//; s/^([0-9]+)\.0([0-9])\./\1.\2./')

# The neighbours' CRDs, as their modules ship them: cert-management's,
# the DNSEntry of Gardener's external-dns-management, which cert-management
# lists at start (a Gardener cluster has it), and prometheus-operator's.
$(NEIGHBOUR_CRDS): hack/tools/certmgmt/go.mod hack/tools/promoperator/go.mod
	@mkdir -p $(@D)
	GOWORK=off go -C hack/tools/certmgmt mod download github.com/gardener/cert-management github.com/gardener/external-dns-management
	GOWORK=off go -C hack/tools/promoperator mod download github.com/prometheus-operator/prometheus-operator
	cp $$(GOWORK=off go -C hack/tools/certmgmt list -m -f '{{.Dir}}' github.com/gardener/cert-management)/pkg/apis/cert/crds/*.yaml $(@D)/
	cp $$(GOWORK=off go -C hack/tools/certmgmt list -m -f '{{.Dir}}' github.com/gardener/external-dns-management)/pkg/apis/dns/crds/dns.gardener.cloud_dnsentries.yaml $(@D)/
	cp $$(GOWORK=off go -C hack/tools/promoperator list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)/example/prometheus-operator-crd/*.yaml $(@D)/
	chmod 644 $(@D)/*.yaml
	@touch $@
