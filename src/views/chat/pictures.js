// Pictures for the composer: decoded by the browser, drawn again at the
// size Hearth chose, and encoded afresh. Only pixels are drawn, so the
// file's metadata (EXIF, a photo's location) never comes along.

export async function decodePicture(file) {
  // 'from-image' turns a photo the way its EXIF orientation says before
  // that metadata is dropped.
  return await createImageBitmap(file, { imageOrientation: 'from-image' });
}

function base64Of(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

async function draw(bitmap, width, height, type) {
  const canvas = new OffscreenCanvas(width, height);
  const cx = canvas.getContext('2d');
  if (type === 'image/jpeg') {
    // JPEG has no transparency: what was clear becomes white, not black.
    cx.fillStyle = '#ffffff';
    cx.fillRect(0, 0, width, height);
  }
  cx.imageSmoothingQuality = 'high';
  cx.drawImage(bitmap, 0, 0, width, height);
  return await canvas.convertToBlob(type === 'image/jpeg' ? { type, quality: 0.85 } : { type });
}

// Encodes `bitmap` at width × height: as PNG when `png` (screenshots and
// diagrams keep sharp text) unless that is larger than `maxPng` bytes,
// else as JPEG. Answers { type, data } with data in base64.
export async function encodePicture(bitmap, width, height, png, maxPng) {
  try {
    let blob = png ? await draw(bitmap, width, height, 'image/png') : null;
    if (!blob || blob.size > maxPng) {
      blob = await draw(bitmap, width, height, 'image/jpeg');
    }
    return { type: blob.type, data: await base64Of(blob) };
  } finally {
    bitmap.close();
  }
}
