// Package metricdefs gives tests the metrics that both binaries register,
// from their packages' own constructors, so that the documents, alerts and
// dashboards are checked against the code rather than against a list.
package metricdefs

import (
	"errors"

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
	_, webhookErr := admission.NewMetrics(reg)
	_, certErr := serving.NewCertMetrics(reg)
	_, syncerErr := syncer.NewMetrics(reg)
	err := errors.Join(webhookErr, certErr, syncerErr,
		admission.RegisterPolicy(reg, affinity.DefaultPolicy()),
		admission.RegisterBuildInfo(reg),
		syncer.RegisterBuildInfo(reg))
	if err != nil {
		return nil, err
	}
	return reg.Gather()
}
