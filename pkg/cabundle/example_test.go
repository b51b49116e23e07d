package cabundle_test

import (
	"fmt"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
)

// After a rotation the bundle holds the new CA and, for the overlap, the
// old one; Merge says when to look again: when the old CA's overlap ends.
func ExampleMerge() {
	now := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	oldCA, err := certtest.NewCA(certtest.Options{CommonName: "old", NotBefore: now.Add(-60 * 24 * time.Hour)})
	if err != nil {
		panic(err)
	}
	newCA, err := certtest.NewCA(certtest.Options{CommonName: "new", NotBefore: now.Add(-time.Minute)})
	if err != nil {
		panic(err)
	}

	res := cabundle.Merge(cabundle.Input{
		Source:  newCA.CertPEM,           // ca.crt of the Secret, just renewed
		Serving: newCA.CertPEM,           // tls.crt: the self-signed CA serves itself
		Current: [][]byte{oldCA.CertPEM}, // the caBundle in place
		Overlap: time.Hour,
		Now:     now,
	})
	fmt.Println(res.Verdict.Reason)
	for _, c := range res.Certificates {
		fmt.Println(c.Subject.CommonName)
	}
	fmt.Println("look again in", res.RequeueAfter)
	// Output:
	// valid
	// new
	// old
	// look again in 1h0m0s
}
