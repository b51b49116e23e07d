// Package metricdefs gives tests the metrics that both binaries register,
// from their packages' own constructors, so that the documents, alerts and
// dashboards are checked against the code rather than against a list.
package metricdefs

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/serving"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// Registered registers every metric of snatch-webhook and cabundle-syncer
// on a fresh registry and returns the gathered families.
func Registered() ([]*dto.MetricFamily, error) {
	reg := prometheus.NewRegistry()
	if _, err := admission.NewMetrics(reg); err != nil {
		return nil, err
	}
	if err := admission.RegisterPolicy(reg, affinity.DefaultPolicy()); err != nil {
		return nil, err
	}
	if _, err := serving.NewCertMetrics(reg); err != nil {
		return nil, err
	}
	if _, err := syncer.NewMetrics(reg); err != nil {
		return nil, err
	}
	if err := admission.RegisterBuildInfo(reg); err != nil {
		return nil, err
	}
	if err := syncer.RegisterBuildInfo(reg); err != nil {
		return nil, err
	}
	return reg.Gather()
}
