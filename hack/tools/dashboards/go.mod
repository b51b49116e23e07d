// Module dashboards generates the Grafana dashboards of
// deploy/components/dashboards with the Grafana Foundation SDK. It is
// separate from the main module so that the SDK stays out of the shipped
// binaries' build.
module github.com/kyma-project/kim-snatch/hack/tools/dashboards

go 1.26.7

require github.com/grafana/grafana-foundation-sdk/go v0.0.22
