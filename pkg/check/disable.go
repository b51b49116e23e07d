package check

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// disableFacts are what the emergency-disable marker says, the ConfigMap
// that the documented disable creates beside deleting the MWC and the
// restore deletes last (docs/operations.md, "Emergency disable and
// restore"): whether it exists, and its reason, its author and since when.
type disableFacts struct {
	Namespace, Name string
	Present         bool
	Reason, By      string
	Since           time.Time
	Err             error // the read failed, so Present is unknown
}

// readDisable reads the marker, which lives beside the Secret, as the
// syncer reads it.
func readDisable(ctx context.Context, client kubernetes.Interface, cfg Config) disableFacts {
	d := disableFacts{Namespace: cfg.SecretNamespace, Name: syncer.EmergencyDisableName}
	cm, err := client.CoreV1().ConfigMaps(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		d.Err = err
	default:
		d.Present, d.Since = true, cm.CreationTimestamp.Time
		d.Reason, d.By = cm.Data[syncer.EmergencyDisableReasonKey], cm.Data[syncer.EmergencyDisableByKey]
	}
	return d
}

// judgeMissingConfiguration judges an MWC that does not exist: a WARN
// under the emergency disable, not seen when the marker could not be
// read, and a FAIL without the marker.
func judgeMissingConfiguration(facts configFacts) found {
	d := facts.Disable
	switch {
	case d.Present:
		return judged(StatusWarn, keyConfigDisabled, facts)
	case d.Err != nil:
		what := "ConfigMap " + d.Namespace + "/" + d.Name
		res, _ := unreadable("get "+what, what, d.Err)
		return res
	}
	return judged(StatusFail, keyConfigMissing, facts)
}
