# What weft's PyTorch backend (integrations/torch) needs: a Python 3 interpreter that has torch,
# PyTorch's C++ API (TorchConfig.cmake) and pybind11. Sets:
#   WEFT_TORCH_FOUND            all three were found
#   WEFT_TORCH_WHY              why not, for the configure summary
#   WEFT_TORCH_VERSION          PyTorch's version
#   WEFT_TORCH_PYTHON_LIBRARY   libtorch_python (the extension's base classes live there)
#   WEFT_TORCH_PYTHON_DIR       where `cmake --install` puts the weft_torch package (cache)
#   WEFT_TORCH_RPATH_TO_LIBDIR  the installed package's way to the installed libweft
# Python3_EXECUTABLE may be given; otherwise the first of `python3` on PATH and /usr/bin/python3
# that has torch is used (Debian's python3-torch belongs to /usr/bin/python3, which another
# python3 often comes before on PATH).

set(WEFT_TORCH_FOUND OFF)
set(WEFT_TORCH_WHY "")

set(_weft_torch_probe "import importlib.util as u, sys; s = u.find_spec('torch'); \
print(s.submodule_search_locations[0] if s else ''); sys.exit(0 if s else 1)")
set(_weft_torch_dir "")
if(NOT Python3_EXECUTABLE)
  foreach(_weft_py python3 /usr/bin/python3)
    find_program(_weft_py_path NAMES ${_weft_py} NO_CACHE)
    if(NOT _weft_py_path)
      continue()
    endif()
    execute_process(COMMAND ${_weft_py_path} -c "${_weft_torch_probe}" RESULT_VARIABLE _weft_rc
      OUTPUT_VARIABLE _weft_torch_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_weft_rc EQUAL 0)
      set(Python3_EXECUTABLE ${_weft_py_path} CACHE FILEPATH "Python interpreter (the one with torch)")
      break()
    endif()
    unset(_weft_py_path)
  endforeach()
else()
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "${_weft_torch_probe}" OUTPUT_VARIABLE _weft_torch_dir
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

if(NOT _weft_torch_dir)
  set(WEFT_TORCH_WHY "no Python 3 with torch (apt install python3-torch libtorch-dev pybind11-dev)")
  return()
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module)
find_package(pybind11 CONFIG QUIET)
# Debian installs TorchConfig.cmake under /usr/lib/<triplet>/cmake; pip's torch under share/cmake.
find_package(Torch CONFIG QUIET HINTS ${_weft_torch_dir}/share/cmake/Torch)
if(NOT Python3_Development.Module_FOUND)
  set(WEFT_TORCH_WHY "Python 3 headers not found (apt install python3-dev)")
elseif(NOT pybind11_FOUND)
  set(WEFT_TORCH_WHY "pybind11 not found (apt install pybind11-dev)")
elseif(NOT Torch_FOUND)
  set(WEFT_TORCH_WHY "PyTorch's C++ API (TorchConfig.cmake) not found (apt install libtorch-dev, or Torch_DIR)")
endif()
if(WEFT_TORCH_WHY)
  return()
endif()
get_filename_component(_weft_torch_libdir "${TORCH_LIBRARY}" DIRECTORY)
find_library(WEFT_TORCH_PYTHON_LIBRARY torch_python HINTS ${_weft_torch_libdir} ${_weft_torch_dir}/lib)
if(NOT WEFT_TORCH_PYTHON_LIBRARY)
  set(WEFT_TORCH_WHY "libtorch_python not found beside ${TORCH_LIBRARY}")
  return()
endif()
set(WEFT_TORCH_VERSION ${Torch_VERSION})
set(WEFT_TORCH_FOUND ON)

# The installed package goes where this interpreter looks under the install prefix: Debian's
# interpreters read <prefix>/lib/python3.X/dist-packages, others site-packages.
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sys, sysconfig; \
p = sysconfig.get_path('platlib', 'posix_prefix', vars={'platbase': '@', 'base': '@'})[2:]; \
print(p.replace('site-packages', 'dist-packages') if any(x.endswith('dist-packages') for x in sys.path) else p)"
  OUTPUT_VARIABLE _weft_torch_pydir OUTPUT_STRIP_TRAILING_WHITESPACE)
set(WEFT_TORCH_PYTHON_DIR "${_weft_torch_pydir}" CACHE STRING
  "Where the weft_torch Python package is installed, under CMAKE_INSTALL_PREFIX")
file(RELATIVE_PATH WEFT_TORCH_RPATH_TO_LIBDIR "/prefix/${WEFT_TORCH_PYTHON_DIR}/weft_torch"
  "/prefix/${CMAKE_INSTALL_LIBDIR}")
