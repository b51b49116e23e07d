package admission_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// A Pod created without any affinity gets the preferred term for the Kyma
// pool as one JSON patch operation; the uid comes back as it was sent.
func ExampleHandler() {
	mutator, err := affinity.NewMutator(affinity.DefaultPolicy())
	if err != nil {
		panic(err)
	}
	handler, err := admission.NewHandler(admission.Options{Mutator: mutator})
	if err != nil {
		panic(err)
	}

	review := `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
		"uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "kind": {"group": "", "version": "v1", "kind": "Pod"},
		"operation": "CREATE", "namespace": "kyma-system",
		"object": {"metadata": {"name": "app"}, "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}`
	req := httptest.NewRequest(http.MethodPost, webhookpath.MutatePod, strings.NewReader(review))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)

	var answer struct {
		Response struct {
			UID       string `json:"uid"`
			Allowed   bool   `json:"allowed"`
			PatchType string `json:"patchType"`
			Patch     []byte `json:"patch"` // base64 in the JSON
		} `json:"response"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		panic(err)
	}
	fmt.Println(rec.Code, answer.Response.UID, answer.Response.Allowed, answer.Response.PatchType)
	fmt.Println(string(answer.Response.Patch))
	// Output:
	// 200 705ab4f5-6393-11e8-b7cc-42010a800002 true JSONPatch
	// [{"op":"add","path":"/spec/affinity","value":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,"preference":{"matchExpressions":[{"key":"worker.gardener.cloud/pool","operator":"In","values":["cpu-worker-0"]}]}}]}}}]
}
