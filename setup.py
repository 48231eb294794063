"""pip install . — builds torchcost's C++ extension with CMake and installs the Python package.

Offline, with Debian's own tools (python3-pip, python3-setuptools, pybind11-dev,
cmake and the libraries tools/setup.sh installs): there is no pyproject.toml, so
pip builds with the setuptools it has and downloads nothing. Debian's Python is
"externally managed": install into a virtual environment
(python3 -m venv --system-site-packages ENV; ENV/bin/pip install .) or pass
--break-system-packages. The extension is built in build/pip (TORCHCOST_BUILD_DIR
overrides it; ccache is used when present), and the TorchScript reader plugin
(libtorchcost_torchscript.so) is installed beside it, so .pt files are read
without LibTorch being loaded until then.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures the repository with CMake and builds the target _core (and the TorchScript plugin)."""

    def build_extension(self, ext):
        build = os.environ.get("TORCHCOST_BUILD_DIR") or os.path.join(ROOT, "build", "pip")
        cfg = ["cmake", "-S", ROOT, "-B", build, "-DTORCHCOST_BUILD_PYTHON=ON", "-DPython_EXECUTABLE=" + sys.executable]
        # NB: an existing build tree (TORCHCOST_BUILD_DIR=build) keeps its settings; only _core is added.
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            cfg += ["-DCMAKE_BUILD_TYPE=Release", "-DTORCHCOST_BUILD_TESTS=OFF", "-DTORCHCOST_BUILD_BENCHMARKS=OFF",
                    "-DTORCHCOST_INSTALL=OFF"]
            if shutil.which("ccache"):
                cfg.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.check_call(cfg)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        targets = ["_core"]
        cache = open(os.path.join(build, "CMakeCache.txt")).read()
        with_plugin = "TORCHCOST_WITH_LIBTORCH:BOOL=ON" in cache
        if with_plugin:
            targets.append("torchcost_torchscript")
        subprocess.check_call(["cmake", "--build", build, "-j", jobs, "--target"] + targets)
        out = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(out, exist_ok=True)
        built = glob.glob(os.path.join(build, "python", "torchcost", "_core*.so"))
        if len(built) != 1:
            raise RuntimeError("expected one _core*.so in %s, found %r" % (build, built))
        shutil.copy2(built[0], self.get_ext_fullpath(ext.name))
        if with_plugin:
            shutil.copy2(os.path.join(build, "libtorchcost_torchscript.so"), out)


setup(
    name="torchcost",
    version="0.1.0",
    description="What a PyTorch model costs (params, FLOPs, peak training memory), without running it",
    packages=["torchcost", "torchcost.reference"],
    package_data={"torchcost": ["py.typed"]},
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("torchcost._core")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.8",
    zip_safe=False,
)
