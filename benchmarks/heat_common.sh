# Shared set-up of the issue-12 device scripts (sourced with $D set): unpack the packed build in
# $D, name the CLI ($G) and the common bench arguments ($B), record the device.
OUT=${OUT:-.}
tar -C "$D" -xJf "$D/bin.tar.xz"
G=$D/galerkin
B="bench --heat --gpu --cpu-max-dofs 0 --steps 50 --runs 3 --levels none"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/device.txt"
