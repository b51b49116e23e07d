package syncer

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// The emergency-disable marker (docs/operations.md, "Emergency disable and
// restore"): a ConfigMap of this name in the Secret's namespace, which the
// documented disable creates beside deleting the MutatingWebhookConfiguration
// and the documented restore deletes last. Its data names why and who. The
// name is fixed, so that the documented commands and the RBAC that names it
// hold for every installation.
const (
	EmergencyDisableName      = "kim-snatch-emergency-disable"
	EmergencyDisableReasonKey = "reason"
	EmergencyDisableByKey     = "by"
)

// The sync that finds the MutatingWebhookConfiguration deleted while the
// marker exists: nothing is missing by mistake, so it is neither refused
// nor an error.
const OutcomeDisabled, MsgDisabled = "disabled", "caBundle not written, emergency disable"

// disabledEnding is the ending of a sync under the emergency disable: the
// syncer waits for the restore, as it waits for any missing MWC, but
// counts no error and records no Warning.
func disabledEnding() *ending {
	return &ending{outcome: OutcomeDisabled, msg: MsgDisabled}
}

// logDisabled logs the disable with the marker's reason at info level once
// for each version of the marker, and at debug level on the later syncs
// under the same version, so that a disable that lasts does not fill the log.
func (r *Reconciler) logDisabled(log logr.Logger, marker *corev1.ConfigMap) {
	if marker.ResourceVersion == r.disabledLogged {
		log = log.V(1)
	}
	r.disabledLogged = marker.ResourceVersion
	log.Info(MsgDisabled, logkeys.Outcome, OutcomeDisabled,
		logkeys.Marker, marker.Namespace+"/"+marker.Name,
		logkeys.DisableReason, marker.Data[EmergencyDisableReasonKey],
		logkeys.DisabledBy, marker.Data[EmergencyDisableByKey],
		logkeys.Detail, fmt.Sprintf("MutatingWebhookConfiguration %s is deleted on purpose; the syncer never "+
			"creates it, and writes the caBundle once the restore applies it again", r.cfg.WebhookConfiguration))
}

// presence keeps gauge at 1 while the informer it is added to holds an
// object, and at 0 once it holds none. The informers of CacheOptions hold
// at most the one object they are named for.
func presence(gauge prometheus.Gauge) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { gauge.Set(1) },
		UpdateFunc: func(any, any) { gauge.Set(1) },
		DeleteFunc: func(any) { gauge.Set(0) },
	}
}
