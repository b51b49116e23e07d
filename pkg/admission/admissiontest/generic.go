package admissiontest

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// Generic is controller-runtime's admission.Webhook around a handler that
// decodes the whole Pod into k8s types, decides with m, adds the term to
// the typed Pod, encodes it again and diffs the two documents into a JSON
// patch. It logs each decision to log as the snatch-webhook does, when log
// is enabled: with logr.Discard() it pays for no logging.
func Generic(m *affinity.Mutator, log logr.Logger) http.Handler {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err) // the client-go scheme always registers
	}
	decoder := admission.NewDecoder(scheme)
	term := m.Policy().Term()
	return &admission.Webhook{
		LogConstructor: func(logr.Logger, *admission.Request) logr.Logger { return logr.Discard() },
		Handler: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
			pod := &corev1.Pod{}
			if err := decoder.Decode(req, pod); err != nil {
				return admission.Errored(http.StatusBadRequest, err)
			}
			d := m.Decide(m.Policy().FactsOf(pod))
			if log.Enabled() {
				outcome := "allowed"
				if d.Patched() {
					outcome = "patched"
				}
				log.Info("admission decision", "namespace", req.Namespace, "pod", pod.Name, "uid", string(req.UID),
					"outcome", outcome, "reason", string(d.Reason), "detail", d.Message)
			}
			if !d.Patched() {
				return admission.Allowed(string(d.Reason))
			}
			addTerm(pod, term)
			marshaled, err := json.Marshal(pod)
			if err != nil {
				return admission.Errored(http.StatusInternalServerError, err)
			}
			return admission.PatchResponseFromRaw(req.Object.Raw, marshaled)
		}),
	}
}

// addTerm appends term to the Pod's preferred node affinity.
func addTerm(pod *corev1.Pod, term corev1.PreferredSchedulingTerm) {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := pod.Spec.Affinity.NodeAffinity
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, term)
}
