// Module vulndb pins the Go vulnerability database that `make vuln` checks
// the binaries against: golang.org/x/vulndb holds it as OSV files in
// data/osv, which govulncheck reads from disk. Nothing imports the module, so
// `go mod tidy` would drop the requirement: the Makefile only downloads it,
// and go.sum checks what it downloads (docs/releasing.md, "Vulnerabilities";
// hack/tools/README.md says why it is a module of its own).
module github.com/kyma-project/kim-snatch/hack/tools/vulndb

go 1.26.0

require golang.org/x/vulndb v0.0.0-20261105234957-e22db6528018
