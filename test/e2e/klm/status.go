package klm

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conditions KLM keeps on a Manifest (internal/manifest/status/condition.go).
const (
	ConditionResources    = "Resources"
	ConditionInstallation = "Installation"
)

// Operation messages of KLM's status (status/state.go, skrresources/sync.go).
const (
	opWaiting     = "waiting for resources to become ready"
	opReady       = "resources are ready"
	opSyncedDiff  = "resource syncTarget state diff detected"
	opSameVersion = "resource syncTarget diff detected but in same oci layer, prevent sync resource to be deleted"
)

// initConditions adds the conditions that are missing, False
// (status/condition.go InitializeStatusConditions).
func initConditions(m *Manifest) {
	defaults := []metav1.Condition{
		{Type: ConditionResources, Reason: "ResourcesAvailable", Message: "resources not parsed"},
		{Type: ConditionInstallation, Reason: "Ready", Message: "installation is not ready"},
	}
	for _, c := range defaults {
		if meta.FindStatusCondition(m.Status.Conditions, c.Type) == nil {
			c.Status = metav1.ConditionFalse
			c.ObservedGeneration = m.Generation
			meta.SetStatusCondition(&m.Status.Conditions, c)
		}
	}
}

// setConditionTrue turns a condition True once, with its message as the
// operation (status/condition.go setConditionToTrue).
func setConditionTrue(m *Manifest, condType, message string) {
	c := meta.FindStatusCondition(m.Status.Conditions, condType)
	if c == nil || c.Status == metav1.ConditionTrue {
		return
	}
	updated := *c
	updated.Status, updated.ObservedGeneration, updated.Message = metav1.ConditionTrue, m.Generation, message
	updated.LastTransitionTime = metav1.Time{}
	meta.SetStatusCondition(&m.Status.Conditions, updated)
	m.Status.Operation = message
}

// setState records the state the state check found, when it differs, and
// reports whether it did (status/state.go
// RequireManifestStateUpdateAfterSyncResource).
func setState(m *Manifest, s State) bool {
	if m.Status.State == s {
		return false
	}
	if s == StateReady {
		setConditionTrue(m, ConditionInstallation, "installation is ready and resources can be used")
	}
	m.Status.State = s
	m.Status.Operation = opReady
	if s == StateProcessing || s == StateError {
		m.Status.Operation = opWaiting
	}
	return true
}

// Intervals are KLM's requeue intervals and its rate limiter's bounds.
type Intervals struct {
	// Success, Busy, Warning and Error are the requeue after a reconcile
	// that ends in Ready, in Processing or Deleting, in Warning and in
	// Error (pkg/queue/requeue_intervals.go). The skipped Manifest is
	// requeued after Success.
	Success, Busy, Warning, Error time.Duration
	// FailureBase and FailureMax bound the per-Manifest exponential
	// backoff (internal/rate_limiter.go) of a reconcile that returned an
	// error, and the requeue while a prune phase is not finished.
	FailureBase, FailureMax time.Duration
	// Mandatory is the requeue of the mandatory-module controller, which
	// applies a ModuleReleaseMeta's version at the latest then.
	Mandatory time.Duration
}

// DefaultIntervals are KLM's defaults at 1.20.4 (internal/pkg/flags/flags.go).
func DefaultIntervals() Intervals {
	return Intervals{
		Success: 5 * time.Minute, Busy: 5 * time.Second, Warning: 30 * time.Second, Error: 2 * time.Second,
		FailureBase: 5 * time.Second, FailureMax: 30 * time.Second,
		Mandatory: 30 * time.Second,
	}
}

// after is the requeue of a reconcile that ended in s without an error
// (queue.DetermineRequeueInterval; KLM's small jitter is left out).
func (iv Intervals) after(s State) time.Duration {
	switch s {
	case StateError:
		return iv.Error
	case StateProcessing, StateDeleting:
		return iv.Busy
	case StateWarning:
		return iv.Warning
	}
	return iv.Success
}
