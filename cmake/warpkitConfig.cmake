# warpkit's CMake package, installed under <prefix>/lib/cmake/warpkit by `make install` or
# `cmake --install`:
#   find_package(warpkit CONFIG REQUIRED)
#   target_link_libraries(your_target PRIVATE warpkit::warpkit)
# warpkit::warpkit carries the include directory and the C++17 / CUDA 17 standard, nothing else;
# the consumer enables CUDA and picks its architectures.
get_filename_component(_warpkit_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT EXISTS "${_warpkit_prefix}/include/warpkit/version.cuh")
  set(warpkit_FOUND FALSE)
  set(warpkit_NOT_FOUND_MESSAGE
      "warpkit's headers are not in ${_warpkit_prefix}/include (an incomplete install?)")
  unset(_warpkit_prefix)
  return()
endif()

if(NOT TARGET warpkit::warpkit)
  add_library(warpkit::warpkit INTERFACE IMPORTED)
  set_target_properties(warpkit::warpkit PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_warpkit_prefix}/include"
    INTERFACE_COMPILE_FEATURES "cxx_std_17;cuda_std_17")
endif()
unset(_warpkit_prefix)
