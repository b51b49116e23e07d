package check

import (
	"context"
	"crypto/x509"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// The IDs of the checks, in the order Run reports them. They are part of
// the command's output contract (table and JSON) and never change.
const (
	IDWebhookPods          = "webhook-pods"
	IDSyncerLease          = "syncer-lease"
	IDCASecret             = "ca-secret"
	IDWebhookConfiguration = "webhook-configuration"
	IDCABundle             = "ca-bundle"
	IDNamespace            = "namespace"
	IDWebhookEndpoints     = "webhook-endpoints"
	IDServedCertificate    = "served-certificate"
	IDAdmission            = "admission"
	IDKymaPool             = "kyma-pool"
	IDPlacement            = "placement"
)

// ManagedByLabel and ManagedByValue mark the namespaces Kyma Lifecycle
// Manager manages; the webhook's namespaceSelector selects them.
const ManagedByLabel, ManagedByValue = "operator.kyma-project.io/managed-by", "kyma"

// Status is the outcome of one check, or of a whole Report.
type Status string

// The statuses of a check, from best to worst. A skipped check was not
// looked at, so a Report that holds one is at best INCOMPLETE: a run that
// could not see an item must not pass for one that saw it healthy.
const (
	StatusPass Status = "PASS"
	StatusSkip Status = "SKIP"
	StatusWarn Status = "WARN"
	StatusFail Status = "FAIL"
	// StatusIncomplete is a Report's status, never a check's: no check
	// failed, and at least one was skipped. It ranks above WARN, since the
	// item not seen may be the one that fails.
	StatusIncomplete Status = "INCOMPLETE"
)

// Result is the outcome of one check.
type Result struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	// Message says what was found and Remediation what to do next (empty
	// on PASS), one line each; Details lists what the message counts, such
	// as every Pod that placement found, which the table shows with -v.
	Message     string   `json:"message"`
	Remediation string   `json:"remediation"`
	Details     []string `json:"details,omitempty"`
}

// Config names what the checks look at; the command fills it from its flags.
type Config struct {
	Namespace                                 string          // of the webhook Pods and the syncer Pods
	SecretNamespace, SecretName, CAKey        string          // the CA the syncer copies
	WebhookConfiguration                      string          // the MutatingWebhookConfiguration
	WebhookService                            string          // in Namespace; entries that call another are not ours
	LeaderElectionNamespace, LeaderElectionID string          // the syncer's Lease
	WebhookSelector                           labels.Selector // the webhook Pods in Namespace
	MinReadyWebhooks                          int             // ready webhook Pods to pass; fewer but one warn
	MinCAValidity                             time.Duration   // CA validity left to pass; less warns
	TargetNamespace                           string          // when set, adds the namespace check for it
	PoolLabelKey, WorkerPool                  string          // the Kyma pool's Nodes, as the webhook's flags name them
	AdmissionNamespace                        string          // Kyma-managed, for the admission item's dry-run Pod
	// InCluster is true in a Pod of the cluster, which reaches every Pod address.
	InCluster bool
}

// Run runs every check against the cluster in a fixed order, at time now. It
// never fails: a read error is the result of the check that needed the object.
func Run(ctx context.Context, client kubernetes.Interface, cfg Config, now time.Time) Report {
	// The Secret, the MutatingWebhookConfiguration and the emergency-disable
	// marker are read once and shared, so that every check sees the same
	// version of each.
	secret, secretErr := client.CoreV1().Secrets(cfg.SecretNamespace).Get(ctx, cfg.SecretName, metav1.GetOptions{})
	mwcs := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	mwc, mwcErr := mwcs.Get(ctx, cfg.WebhookConfiguration, metav1.GetOptions{})
	if mwcErr != nil {
		mwc = nil
	}
	disable := readDisable(ctx, client, cfg)
	// The dry run goes first: it is the one item that waits on the
	// webhook, and it must see the endpoints as the reads below do.
	admission := checkAdmission(ctx, client, cfg, mwc, mwcErr, disable)
	caResult, ca := checkCASecret(cfg, secret, secretErr, now)
	targets := resolveEntries(ctx, client, cfg, mwc)
	results := []Result{
		checkWebhookPods(ctx, client, cfg),
		checkSyncerLease(ctx, client, cfg, now),
		caResult,
		checkWebhookConfiguration(cfg, mwc, mwcErr, disable),
		checkCABundle(cfg, ca, mwc, mwcErr),
		checkWebhookEndpoints(cfg, mwc, mwcErr, targets),
		checkServedCertificate(ctx, cfg, mwc, mwcErr, targets, now),
		admission,
		checkKymaPool(ctx, client, cfg),
		checkPlacement(ctx, client, cfg),
	}
	if cfg.TargetNamespace != "" {
		results = append(results, checkNamespace(ctx, client, cfg, mwc, mwcErr))
	}
	return NewReport(results)
}

// result builds a Result whose message stays one line, whatever error it holds.
func result(id string, status Status, msg, remediation string) Result {
	return Result{ID: id, Status: status, Message: oneLine(msg), Remediation: remediation}
}

// judged is what a decision found, with the facts its words print.
func judged(status Status, key finding, facts any) found {
	return found{status: status, key: key, facts: facts}
}

// blocked skips an item that needs what the item blocker found unusable.
func blocked(key finding, facts any, blocker string) found {
	return found{status: StatusSkip, key: key, facts: facts, blocker: blocker}
}

// accessFacts are the facts of a read that failed: Op is the request as
// the credentials would be granted it, What the object, Resource its
// resource for kubectl auth can-i.
type accessFacts struct {
	Op, What, Resource string
	Err                error
}

// unreadable makes a failed read a SKIP or a FAIL, or reports false. One
// rule for every item: an identity that may not read what an item needs
// (401, 403) cannot prove it healthy, nor broken, so the item is not seen
// and the run is INCOMPLETE, which no gate accepts. The syncer's
// ServiceAccount, which check may run as, may not read Pods or Namespaces,
// which says nothing of the installation. Any other error fails the item.
// what names the object, e.g. "Secret kyma-system/x", its first word the
// resource.
func unreadable(op, what string, err error) (found, bool) {
	switch {
	case err == nil:
		return found{}, false
	case denied(err):
		return judged(StatusSkip, keyNotPermitted, accessFacts{Op: op, Err: err}), true
	}
	kind, _, _ := strings.Cut(what, " ")
	resource := strings.ToLower(strings.TrimSuffix(kind, "s")) + "s"
	return judged(StatusFail, keyReadFailure, accessFacts{What: what, Resource: resource, Err: err}), true
}

// denied reports whether err is the API server refusing the credentials
// (401) or the request (403): the access-denied rule of unreadable.
func denied(err error) bool { return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) }

// shortFingerprint is enough of a SHA-256 fingerprint to tell two CAs apart.
func shortFingerprint(c *x509.Certificate) string { return cabundle.Fingerprint(c)[:16] }
