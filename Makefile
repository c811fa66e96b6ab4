# Thin wrapper over CMake: the README's two commands.
#   make run    build, then run the main job (gpuhash-bench --summary; GPU if present, else host)
#   make test   build, then run the whole test suite through ctest
BUILD ?= build
PREFIX ?= /usr/local
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build configure run test install clean
all: build

configure:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/tools/gpuhash-bench --summary

test: build
	scripts/run-tests $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
