# Sourced by scripts/test.sh, scripts/soak.sh and scripts/sanitize.sh (from the package root): prepares the pinned Python
# test peers (.venv, and .venv-stelvio for the stelvio peer, which needs Python 3.12 or later) and exports what the
# test suites read to find them. Peer-backed tests (botocore, strawberry, stelvio) then run instead of skipping.

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r Tests/PythonPeers/requirements.txt

export VORTEX_PYTHON="$PWD/.venv/bin/python"

stelvio_python=""
for candidate in python3.13 python3.12 python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 \
    && "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
    stelvio_python="$candidate"
    break
  fi
done
if [ -n "$stelvio_python" ]; then
  if [ ! -x .venv-stelvio/bin/python ]; then
    "$stelvio_python" -m venv .venv-stelvio
  fi
  .venv-stelvio/bin/pip install --quiet --disable-pip-version-check -r Tests/PythonPeers/stelvio-requirements.txt
  export VORTEX_STELVIO_PYTHON="$PWD/.venv-stelvio/bin/python"
else
  echo "warning: no Python 3.12 or later found: the stelvio peer is not installed, and its tests fail" >&2
fi
export VORTEX_REQUIRE_PEERS=1
