# Source this: installs NVIDIA's NVRTC and ptxas from PyPI into a virtual
# environment (no GPU, driver or CUDA toolkit needed) and puts them where
# sloth's kernel compile test finds them (LD_LIBRARY_PATH, PATH).
#   source scripts/cuda-compilers.sh
#   cargo test --test integration gpu::the_kernels_compile_with_nvrtc -- --nocapture
SLOTH_CUDA_TOOLS=${SLOTH_CUDA_TOOLS:-${TMPDIR:-/tmp}/sloth-cuda-tools}
if [ ! -x "$SLOTH_CUDA_TOOLS/bin/pip" ]; then
  python3 -m venv "$SLOTH_CUDA_TOOLS"
fi
"$SLOTH_CUDA_TOOLS/bin/pip" install --quiet --disable-pip-version-check \
  nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-nvcc-cu12==12.9.86 \
  || "$SLOTH_CUDA_TOOLS/bin/pip" install --quiet --disable-pip-version-check \
  nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-nvcc-cu12==12.9.86
_nv=$("$SLOTH_CUDA_TOOLS/bin/python" -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))')/nvidia
export LD_LIBRARY_PATH="$_nv/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$PATH:$_nv/cuda_nvcc/bin"
echo "NVRTC: $(ls "$_nv"/cuda_nvrtc/lib/libnvrtc.so.* | head -1); ptxas: $(command -v ptxas)"
unset _nv
