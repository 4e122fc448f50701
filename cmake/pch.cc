// Empty: goodput_pch exists to build cmake/pch.h once (cmake/pch.cmake).
