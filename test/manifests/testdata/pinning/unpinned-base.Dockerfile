# A final stage on a base pinned by tag alone: it must be reported.
FROM golang:1.26.8@sha256:ec0383e177f24920f5498de7d96d1cd81ada095b430dda72f8b863b99a485ff6 AS builder
RUN true
FROM gcr.io/distroless/static:nonroot
COPY --from=builder /out/snatch-webhook /snatch-webhook
